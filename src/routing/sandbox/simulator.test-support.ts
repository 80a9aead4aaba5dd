// Shared by the simulator's tests: orders, a connector on a manual clock, and a minimal router over its report log.
import assert from 'node:assert/strict';
import { ManualClock } from '../../lib/clock.js';
import { deterministicId, type OrderId } from '../../lib/ids.js';
import { applyFill, initialFillState, type FillState } from '../../orders/core/fills.js';
import { assertTransition } from '../../orders/core/state-machine.js';
import { classifyReport, type ExecutionReport, type OrderForPartner } from '../connector.js';
import { SandboxConnector } from './sandbox-connector.js';

export const T0 = Date.parse('2026-11-22T10:00:00.000Z');
export const id = (label: string): OrderId => deterministicId('order', T0, label);
export const KOLA = 1_550_000; // KOLA.BRVM reference, cents

export function order(label: string, fields: Partial<OrderForPartner> = {}): OrderForPartner {
  return {
    order_id: id(label),
    instrument: 'KOLA.BRVM',
    instrument_status: 'active',
    side: 'buy',
    qty: 10,
    limit_price_cents: null,
    reference_price_cents: KOLA,
    time_in_force: 'gtc',
    expire_date: null,
    ...fields,
  };
}

/** The client's first cancel request of an order. */
export const cancelRequest = (orderId: OrderId) => ({ request_id: `${orderId}.1`, reason: 'requested' as const });

export function setup(start: number = T0) {
  const clock = new ManualClock(start);
  const connector = new SandboxConnector({ name: 'sgi_sandbox', clock });
  return { clock, connector };
}

export async function allReports(connector: SandboxConnector): Promise<ExecutionReport[]> {
  return [...(await connector.reports(null, { limit: 1_000_000 })).reports];
}

export async function reportsOf(connector: SandboxConnector, orderId: OrderId): Promise<ExecutionReport[]> {
  return (await allReports(connector)).filter((r) => r.order_id === orderId);
}

export const withinBand = (price: number, ref: number) => Math.abs(price - ref) * 100 <= ref;

/**
 * A minimal router over the pure core: applies a connector's reports exactly once and in order
 * (classifyReport), through the state machine and applyFill, as the real router is meant to.
 */
export class MiniRouter {
  readonly orders = new Map<string, FillState & { lastSeq: number; failure: string | null }>();
  position: string | null = null;
  constructor(readonly connector: SandboxConnector) {}
  track(o: OrderForPartner): void {
    this.orders.set(o.order_id, { ...initialFillState(o.qty), lastSeq: 0, failure: null });
  }
  apply(r: ExecutionReport): void {
    const o = this.orders.get(r.order_id);
    assert.ok(o, `report for an unknown order ${r.order_id}`);
    const c = classifyReport(o.lastSeq, r);
    if (c === 'duplicate') return;
    assert.equal(c, 'next', `gap before ${r.report_id}`);
    let next: FillState = o;
    switch (r.type) {
      case 'accepted':
        assertTransition(o.status, 'routed');
        next = { ...o, status: 'routed' };
        break;
      case 'partial_fill':
      case 'fill':
        next = applyFill(o, r);
        assert.equal(next.filled_qty, r.cum_qty);
        assert.equal(next.qty - next.filled_qty, r.leaves_qty);
        assert.equal(next.status, r.type === 'fill' ? 'filled' : 'partially_filled');
        break;
      case 'rejected':
        assertTransition(o.status, 'failed');
        next = { ...o, status: 'failed' };
        break;
      case 'cancelled':
        assertTransition(o.status, 'cancelled');
        assert.equal(r.cum_qty, o.filled_qty);
        assert.equal(r.cancelled_qty, o.qty - o.filled_qty);
        next = { ...o, status: 'cancelled' };
        break;
    }
    this.orders.set(r.order_id, { ...o, ...next, lastSeq: r.seq, failure: r.type === 'rejected' ? r.reason : o.failure });
  }
  async poll(limit = 7): Promise<void> {
    for (;;) {
      const batch = await this.connector.reports(this.position, { limit });
      for (const r of batch.reports) this.apply(r);
      this.position = batch.position;
      if (batch.reports.length < limit) return;
    }
  }
}
