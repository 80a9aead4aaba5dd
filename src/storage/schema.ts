import type { InvestorAccountTable } from '../accounts/account.table.js';
import type { ClientSecretTable, ClientTable } from '../auth/client.table.js';
import type { IdempotencyTable } from '../idempotency/idempotency.table.js';
import type { SigningKeyTable } from '../keys/signing-key.table.js';
import type { AttestationTable } from '../kyc/attestation.table.js';
import type { AuditChunkTable, AuditSnapshotTable } from '../audit/audit.table.js';
import type { OrderFillTable, OrderTable } from '../orders/order.table.js';
import type { TestClockTable } from '../testclocks/test-clock.table.js';
import type { ConnectorPositionTable, SandboxJournalTable } from '../routing/routing.table.js';
import type {
  FixExecIdTable,
  FixMessageTable,
  FixOrderTable,
  FixReportTable,
  FixRequestTable,
  FixSessionTable,
} from '../routing/fix/fix.table.js';
import type { EventQueueTable, EventTable } from '../events/event.table.js';
import type { MarketCalendarTable } from '../markets/calendar.table.js';
import type { FeeScheduleTable } from '../partners/fee-schedule.table.js';
import type { FxRateTable, InstrumentTable } from '../partners/instrument.table.js';
import type { PartnerTable } from '../partners/partner.table.js';
import type { PositionBookTable, PositionBreakTable, PositionStatementTable, PositionTable } from '../positions/position.table.js';
import type { WebhookAttemptTable, WebhookDeliveryTable, WebhookEndpointTable, WebhookMessageTable } from '../webhooks/webhook.table.js';

/** Every table of the service, as Kysely sees it. Each domain declares its own rows. */
export interface Database {
  partners: PartnerTable;
  instruments: InstrumentTable;
  fx_rates: FxRateTable;
  events: EventTable;
  event_queue: EventQueueTable;
  clients: ClientTable;
  client_secrets: ClientSecretTable;
  signing_keys: SigningKeyTable;
  idempotency_keys: IdempotencyTable;
  attestations: AttestationTable;
  orders: OrderTable;
  investor_accounts: InvestorAccountTable;
  test_clocks: TestClockTable;
  order_fills: OrderFillTable;
  connector_positions: ConnectorPositionTable;
  sandbox_journal: SandboxJournalTable;
  fix_sessions: FixSessionTable;
  fix_messages: FixMessageTable;
  fix_orders: FixOrderTable;
  fix_requests: FixRequestTable;
  fix_reports: FixReportTable;
  fix_exec_ids: FixExecIdTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_messages: WebhookMessageTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  audit_snapshots: AuditSnapshotTable;
  audit_chunks: AuditChunkTable;
  market_calendars: MarketCalendarTable;
  position_books: PositionBookTable;
  positions: PositionTable;
  position_statements: PositionStatementTable;
  position_breaks: PositionBreakTable;
  fee_schedules: FeeScheduleTable;
}
