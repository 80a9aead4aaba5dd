import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ORDER_STATUSES } from '../../orders/core/state-machine.js';
import { IntegratorApi } from '../integrator/api.js';
import { resolveCredentials } from '../integrator/credentials.js';
import { say, sayCount } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

/**
 * `cauri orders ...`: the client's orders on the remote service, with the credentials of
 * `cauri login` (scopes `orders:read`, and `orders:write` for cancel and amend).
 */

interface Order {
  id: string;
  status: string;
  instrument: string;
  side: string;
  qty: number;
  filled_qty: number;
  limit_price_cents: number | null;
  pending_request: string | null;
  cancel_reason: string | null;
  last_refusal: { request: string; reason: string } | null;
  [member: string]: unknown;
}

const LIST_COLUMNS = [
  'id',
  'status',
  'instrument',
  'side',
  'qty',
  'filled_qty',
  'limit_price_cents',
  'time_in_force',
  'pending_request',
  'created_at',
];
const FILL_COLUMNS = [
  'id',
  'qty',
  'price_cents',
  'executed_at',
  'gross_cents',
  'fees',
  'net_cents',
  'settlement_date',
  'settlement_status',
];

function api(): IntegratorApi {
  return new IntegratorApi(resolveCredentials());
}

function orderPath(id: string, tail = ''): string {
  return `/v1/orders/${encodeURIComponent(id)}${tail}`;
}

function integer(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new CliError({ key: 'orders.integer', params: { name, min: String(min), max: String(max), value } });
  return n;
}

/** `--note-lang`: the language of the contract note's PDF, the API's `?lang=`; a usage error otherwise. */
function noteLanguage(value: string | undefined): string {
  if (value === undefined) return '';
  if (value !== 'fr' && value !== 'en') throw new CliError({ key: 'orders.noteLang', params: { value } }, 2);
  return `?lang=${value}`;
}

function status(value: string): string {
  if (!(ORDER_STATUSES as readonly string[]).includes(value))
    throw new CliError({ key: 'orders.status', params: { value, statuses: ORDER_STATUSES.join(', ') } });
  return value;
}

/** One member a line, in the order the service sends them. */
function printOrder(order: Order): void {
  const width = Math.max(...Object.keys(order).map((k) => k.length));
  for (const [key, value] of Object.entries(order)) {
    const text = value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    process.stdout.write(`${key.padEnd(width)}  ${text}\n`);
  }
}

/** What a cancel or an amend came to: answered by the partner within the request (200), or later (202). */
function describeAnswer(what: 'cancel' | 'amend', status: number, order: Order): string {
  if (status === 202) return say(`orders.${what}.sent`, { id: order.id, pending: order.pending_request ?? 'pending' });
  if (
    order.last_refusal !== null &&
    order.last_refusal.request === what &&
    order.pending_request === null &&
    !(what === 'cancel' && order.status === 'cancelled')
  ) {
    return say(`orders.${what}.refused`, { id: order.id, reason: order.last_refusal.reason, status: order.status });
  }
  if (what === 'cancel') return say('orders.cancel.done', { id: order.id, reason: order.cancel_reason ?? order.status });
  return say('orders.amend.done', {
    id: order.id,
    qty: String(order.qty),
    limit: String(order.limit_price_cents ?? ''),
    status: order.status,
  });
}

export function registerOrders(program: Command): void {
  const orders = program.command('orders').description("The client's orders, on the remote service");

  orders
    .command('list')
    .description('List orders, newest first')
    .option('--status <status>', `only this status (${ORDER_STATUSES.join(', ')})`)
    .option('--instrument <code>', 'only this instrument, such as SNTS.BRVM')
    .option('--limit <n>', 'how many (1 to 200)', '20')
    .option('--json', 'print the orders as JSON')
    .action(async (options: { status?: string; instrument?: string; limit: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(integer('--limit', options.limit, 1, 200)) });
      if (options.status !== undefined) query.set('status', status(options.status));
      if (options.instrument !== undefined) query.set('instrument', options.instrument);
      const { data } = await api().json<{ data: Order[] }>('GET', `/v1/orders?${query.toString()}`);
      if (options.json === true) printJson(data);
      else printTable(data, LIST_COLUMNS);
    });

  orders
    .command('get <order_id>')
    .description('Show an order as it is now')
    .option('--json', 'print the order as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const order = await api().json<Order>('GET', orderPath(id));
      if (options.json === true) printJson(order);
      else printOrder(order);
    });

  orders
    .command('cancel <order_id>')
    .description('Ask the partner to cancel what remains of an open order')
    .option('--json', 'print the order as the service answered it, with the HTTP status')
    .action(async (id: string, options: { json?: boolean }) => {
      const answer = await api().mutate<Order>(orderPath(id, '/cancel'), {});
      if (options.json === true) printJson({ status: answer.status, order: answer.body });
      else process.stdout.write(`${describeAnswer('cancel', answer.status, answer.body)}\n`);
    });

  orders
    .command('amend <order_id>')
    .description('Change the quantity or the limit price of an open limit order')
    .option('--qty <n>', 'the new total quantity')
    .option('--limit-price-cents <n>', "the new limit price, in cents of the instrument's currency")
    .option('--json', 'print the order as the service answered it, with the HTTP status')
    .action(async (id: string, options: { qty?: string; limitPriceCents?: string; json?: boolean }) => {
      if (options.qty === undefined && options.limitPriceCents === undefined) throw new CliError({ key: 'orders.amend.nothing' });
      // Bounds are the service's to check; the command only refuses what is not a whole number.
      const body = {
        ...(options.qty === undefined ? {} : { qty: integer('--qty', options.qty, 0, Number.MAX_SAFE_INTEGER) }),
        ...(options.limitPriceCents === undefined
          ? {}
          : { limit_price_cents: integer('--limit-price-cents', options.limitPriceCents, 0, Number.MAX_SAFE_INTEGER) }),
      };
      const answer = await api().mutate<Order>(orderPath(id, '/amend'), body);
      if (options.json === true) printJson({ status: answer.status, order: answer.body });
      else process.stdout.write(`${describeAnswer('amend', answer.status, answer.body)}\n`);
    });

  orders
    .command('fills <order_id>')
    .description("The order's executions, oldest first")
    .option('--json', 'print the fills as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const { data } = await api().json<{ data: Record<string, unknown>[] }>('GET', orderPath(id, '/fills'));
      if (options.json === true) printJson(data);
      else
        printTable(
          data.map((fill) => ({ ...fill, fees: feeSummary(fill.fees as Fee[]) })),
          FILL_COLUMNS,
        );
    });

  orders
    .command('contract-note <order_id>')
    .description(
      'The trade confirmation of an order with fills: a summary, the note as JSON (--json), or its PDF written to a file (--pdf)',
    )
    .option('--pdf <file>', 'write the note as a PDF to this file')
    .option('--note-lang <language>', "language of the PDF: fr or en (default: the partner's, French for BRVM and BVMAC partners)")
    .option('--json', 'print the note as JSON')
    .action(async (id: string, options: { pdf?: string; noteLang?: string; json?: boolean }) => {
      // Checked before any request: a typo fails at once (exit 2).
      const query = noteLanguage(options.noteLang);
      if (options.pdf !== undefined) {
        const pdf = await api().bytes(orderPath(id, `/contract-note${query}`), 'application/pdf');
        try {
          writeFileSync(options.pdf, pdf);
        } catch (error) {
          const reason = String((error as { code?: unknown }).code ?? (error instanceof Error ? error.message : error));
          throw new CliError({ key: 'orders.note.unwritable', params: { file: options.pdf, reason } });
        }
        if (options.json === true) printJson({ order_id: id, file: options.pdf, bytes: pdf.length });
        else process.stdout.write(`${say('orders.note.saved', { file: options.pdf, id, bytes: String(pdf.length) })}\n`);
        return;
      }
      const note = await api().json<ContractNote>('GET', orderPath(id, `/contract-note${query}`));
      if (options.json === true) printJson(note);
      else printContractNote(note);
    });
}

interface Fee {
  type: string;
  amount_cents: number;
}

interface ContractNote {
  order_id: string;
  partner: { id: string; name: string };
  subject_id: string;
  account: string | null;
  instrument: { code: string; name: string | null };
  side: string;
  currency: string;
  filled_qty: number;
  average_price_cents: number;
  trade_date: string;
  settlement_date: string;
  settlement_status: string;
  fills: Record<string, unknown>[];
  gross_cents: number;
  fees: Fee[];
  fees_total_cents: number;
  net_cents: number;
}

/** `commission 500000, tax 90000`: a fill's fees in one cell, in cents. */
function feeSummary(fees: readonly Fee[]): string {
  return fees.map((f) => `${f.type} ${f.amount_cents}`).join(', ');
}

function printContractNote(note: ContractNote): void {
  const lines: [string, string][] = [
    ['order', note.order_id],
    ['partner', `${note.partner.name} (${note.partner.id})`],
    ['subject', note.subject_id],
    ['account', note.account ?? ''],
    ['instrument', `${note.instrument.code}${note.instrument.name === null ? '' : ` ${note.instrument.name}`}`],
    ['side', note.side],
    ['filled_qty', String(note.filled_qty)],
    ['average_price_cents', String(note.average_price_cents)],
    ['trade_date', note.trade_date],
    ['settlement', `${note.settlement_date} ${note.settlement_status}`],
    ['gross_cents', String(note.gross_cents)],
    ...note.fees.map((f): [string, string] => [`  ${f.type}_cents`, String(f.amount_cents)]),
    ['fees_total_cents', String(note.fees_total_cents)],
    [
      'net_cents',
      say(note.side === 'buy' ? 'orders.note.payable' : 'orders.note.receivable', { net: String(note.net_cents), currency: note.currency }),
    ],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  for (const [k, v] of lines) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
  process.stdout.write(`\n${sayCount({ one: 'orders.note.fills.one', other: 'orders.note.fills.other' }, note.fills.length)}\n`);
  printTable(
    note.fills.map((fill) => ({ ...fill, fees: feeSummary(fill.fees as Fee[]) })),
    FILL_COLUMNS,
  );
}
