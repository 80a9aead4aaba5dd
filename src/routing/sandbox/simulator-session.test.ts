import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deterministicId, type OrderId } from '../../lib/ids.js';
import { MarketCalendar } from '../../markets/calendar.js';
import { calendarYears, type CalendarEntry } from '../../markets/calendar-file.js';
import { readShippedCalendars } from '../../markets/shipped-calendars.js';
import type { ExecutionReport, OrderForPartner } from '../connector.js';
import { simulatedPriceCents } from './market.js';
import { calendarSessions } from './session.js';
import { SgiSimulator } from './simulator.js';

// The simulated partner on an exchange with sessions, against the calendars the repository ships.
// Monday 2026-11-23 is an ordinary BRVM day: pre-open 09:00, opening auction at 09:45, continuous
// trading to 14:00, pre-close, closing auction at 14:30, trading at last to 15:00 (all UTC).
const calendar = new MarketCalendar(readShippedCalendars().flatMap((f) => calendarYears(f.content as CalendarEntry)));
const sessions = calendarSessions(() => calendar);
const MON_08H = Date.parse('2026-11-23T08:00:00.000Z');
const OPENING_AUCTION = Date.parse('2026-11-23T09:45:00.000Z');
const KOLA = 1_550_000;

function order(label: string, fields: Partial<OrderForPartner> = {}): OrderForPartner {
  return {
    order_id: deterministicId('order', MON_08H, label) as OrderId,
    instrument: 'KOLA.BRVM',
    instrument_status: 'active',
    side: 'buy',
    qty: 10,
    limit_price_cents: null,
    reference_price_cents: KOLA,
    time_in_force: 'gtc',
    expire_date: null,
    tick_size_cents: 500,
    price_limits: { low_cents: 1_433_750, high_cents: 1_666_250 },
    ...fields,
  };
}

const executions = (log: readonly ExecutionReport[]) => log.filter((r) => r.type === 'fill' || r.type === 'partial_fill');

test('nothing executes while the exchange is closed or in pre-open; the opening auction executes what crosses at one price', () => {
  const sim = new SgiSimulator({ name: 'sgi_session', session: sessions });
  const auctionPrice = simulatedPriceCents('KOLA.BRVM', KOLA, OPENING_AUCTION, {
    tick_size_cents: 500,
    price_limits: { low_cents: 1_433_750, high_cents: 1_666_250 },
  });
  const market = order('market');
  const crossing = order('crossing', { limit_price_cents: auctionPrice + 500 });
  const seller = order('seller', { side: 'sell', limit_price_cents: auctionPrice - 500 });
  const below = order('below', { limit_price_cents: auctionPrice - 500 });
  const large = order('large', { qty: 3000 });
  for (const o of [market, crossing, seller, below, large]) assert.equal(sim.submit(o, MON_08H).status, 'accepted');

  assert.deepEqual(executions(sim.reports(null, OPENING_AUCTION - 1).reports), [], 'closed, then pre-open: nothing executes');
  const atAuction = executions(sim.reports(null, OPENING_AUCTION).reports);
  assert.deepEqual(
    atAuction.map((r) => r.order_id).sort(),
    [market, crossing, seller, large].map((o) => o.order_id).sort(),
    'every order the auction price crosses executes at the auction, the others wait',
  );
  for (const r of atAuction) {
    assert.ok(r.type === 'fill' || r.type === 'partial_fill');
    assert.equal(r.fill_price_cents, auctionPrice, 'one price for all');
    assert.equal(r.executed_at, '2026-11-23T09:45:00.000Z');
  }
  const largeFirst = atAuction.find((r) => r.order_id === large.order_id);
  assert.equal(largeFirst?.type, 'partial_fill', 'a large order executes its first part at the auction, the rest later');
  const later = executions(sim.reports(null, OPENING_AUCTION + 60_000).reports).filter((r) => r.order_id === large.order_id);
  assert.ok(later.length > 1, 'then continuous trading executes the rest');
});

test('an order placed in continuous trading fills about a second later; one placed after the close waits for the next open day', () => {
  const sim = new SgiSimulator({ name: 'sgi_session', session: sessions });
  const noon = Date.parse('2026-11-23T12:00:00.000Z');
  sim.submit(order('noon'), noon);
  assert.equal(executions(sim.reports(null, noon + 1000).reports)[0]?.executed_at, '2026-11-23T12:00:01.000Z');

  const friday = Date.parse('2026-11-27T16:00:00.000Z');
  const late = order('friday', { limit_price_cents: null });
  sim.submit(late, friday);
  const monday = Date.parse('2026-11-30T09:45:00.000Z');
  assert.deepEqual(
    executions(sim.reports(null, monday - 1).reports).filter((r) => r.order_id === late.order_id),
    [],
    'not over the weekend',
  );
  const fills = executions(sim.reports(null, monday).reports).filter((r) => r.order_id === late.order_id);
  assert.equal(fills[0]?.executed_at, '2026-11-30T09:45:00.000Z', 'at the next opening auction');
});

test('ioc executes nothing outside a matching phase and is cancelled unfilled, in trading at last as while closed', () => {
  const sim = new SgiSimulator({ name: 'sgi_session', session: sessions });
  sim.submit(order('ioc-closed', { time_in_force: 'ioc' }), MON_08H);
  const closed = sim.reports(null, MON_08H).reports;
  assert.deepEqual(
    closed.map((r) => r.type),
    ['accepted', 'cancelled'],
  );
  assert.equal(closed[1]?.type === 'cancelled' && closed[1].reason, 'unfilled');

  const atLast = Date.parse('2026-11-23T14:40:00.000Z');
  const ioc = order('ioc-last', { time_in_force: 'ioc' });
  sim.submit(ioc, atLast);
  const mine = sim.reports(null, atLast).reports.filter((r) => r.order_id === ioc.order_id);
  assert.deepEqual(
    mine.map((r) => r.type),
    ['accepted', 'cancelled'],
    'no execution at the closing price',
  );
  assert.equal(mine[1]?.type === 'cancelled' && mine[1].reason, 'unfilled');
});

test('trading at last executes nothing: an order placed then waits for the next opening auction; one placed in pre-close meets the closing auction', () => {
  const sim = new SgiSimulator({ name: 'sgi_session', session: sessions });
  const grid = { tick_size_cents: 500, price_limits: { low_cents: 1_433_750, high_cents: 1_666_250 } };
  const closingAuction = Date.parse('2026-11-23T14:30:00.000Z');
  const atLast = Date.parse('2026-11-23T14:40:00.000Z');
  const nextOpening = Date.parse('2026-11-24T09:45:00.000Z');
  const closingPrice = simulatedPriceCents('KOLA.BRVM', KOLA, closingAuction, grid);

  const preClose = order('pre-close');
  sim.submit(preClose, Date.parse('2026-11-23T14:10:00.000Z'));
  const market = order('at-last-market');
  const marketable = order('at-last-limit', { limit_price_cents: 1_666_000 });
  const seller = order('at-last-seller', { side: 'sell', limit_price_cents: 1_434_000 });
  for (const o of [market, marketable, seller]) assert.equal(sim.submit(o, atLast).status, 'accepted');

  const ofToday = executions(sim.reports(null, nextOpening - 1).reports);
  assert.deepEqual(
    ofToday.map((r) => [r.order_id, r.executed_at]),
    [[preClose.order_id, '2026-11-23T14:30:00.000Z']],
    'only the pre-close order executes, at the closing auction; nothing in trading at last, after the close or in pre-open',
  );
  assert.equal(ofToday[0]?.type === 'fill' && ofToday[0].fill_price_cents, closingPrice);

  const tomorrow = executions(sim.reports(null, nextOpening).reports).filter((r) => r.executed_at === '2026-11-24T09:45:00.000Z');
  assert.deepEqual(
    tomorrow.map((r) => r.order_id).sort(),
    [market, marketable, seller].map((o) => o.order_id).sort(),
    "the orders placed in trading at last execute at the next session's opening auction",
  );
  const openingPrice = simulatedPriceCents('KOLA.BRVM', KOLA, nextOpening, grid);
  for (const r of tomorrow) assert.equal(r.type === 'fill' && r.fill_price_cents, openingPrice);
});
