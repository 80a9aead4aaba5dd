import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { orderRow } from '../../test/support/orders.js';
import { systemClock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { CalendarCache } from '../markets/calendar-cache.js';
import { ReferenceData } from '../partners/reference-data.js';
import { findPosition } from './position.repository.js';
import { PositionService } from './position.service.js';

const EXECUTED_AT = Date.UTC(2026, 10, 24, 10);

for (const database of DATABASES) {
  describe(`positions on ${database.name}`, () => {
    test('two fills applied at once to a position whose book does not exist yet both count', async (t) => {
      const storage = await openTestStorage(t, database);
      const positions = new PositionService(
        new ReferenceData(storage.db, systemClock, { refreshMs: 60_000 }),
        new CalendarCache(storage.db, systemClock, pino({ level: 'silent' })),
        systemClock,
        { dialect: storage.dialect, settlementDays: () => 2 },
      );
      const order = orderRow({ id: newId('order'), client_id: 'cli_a', created_at: EXECUTED_AT, subject_id: 'sub_new', side: 'buy' });
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The first transaction makes the book and its position, and holds them uncommitted while the
      // second one reads the position (none yet) and waits to make the same book.
      const first = storage.transact(async (trx) => {
        await positions.fillApplied(trx, order, { fill_qty: 3, fill_price_cents: 1_000, executed_at: EXECUTED_AT });
        await held;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = storage.transact((trx) =>
        positions.fillApplied(trx, order, { fill_qty: 2, fill_price_cents: 1_500, executed_at: EXECUTED_AT }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await Promise.all([first, second]);

      const position = await findPosition(storage.db, order);
      assert.deepEqual(
        { qty: position?.qty, cost_cents: String(position?.cost_cents) },
        { qty: 5, cost_cents: String(3 * 1_000 + 2 * 1_500) },
      );
    });
  });
}
