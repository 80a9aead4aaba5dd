import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import { ApiError, notFound, validationError } from '../lib/errors.js';
import { isId, newId, type ClientId } from '../lib/ids.js';
import type { Transact } from '../storage/database.js';
import type { Database } from '../storage/schema.js';
import { checkAdvance, checkFrozenTime } from './rules.js';
import {
  connectorsOnClock,
  findClientTestClock,
  frozenTimeOf,
  insertTestClock,
  listClientTestClocks,
  markTestClockDeleted,
  moveTestClock,
  nextExpiryOnClock,
} from './test-clock.repository.js';
import type { TestClock, TestClockCreate } from './test-clock.schemas.js';
import type { TestClockRow } from './test-clock.table.js';

export function toTestClock(row: TestClockRow): TestClock {
  return {
    id: row.id,
    object: 'test_clock',
    name: row.name,
    frozen_time: isoMillis(Number(row.frozen_time)),
    status: 'ready',
    created_at: isoMillis(Number(row.created_at)),
  };
}

/**
 * What an advance drives, passed in by the composition root (src/services.ts): the connector
 * registry and the router, which read a partner's reports, and the expiry of orders. Test clocks sit
 * below the orders and the routing that read them, so they name only what they call.
 */
export interface ClockConnectors<Connector> {
  get(connector: string, partnerId: string): Connector | undefined;
}

export interface ClockReports<Connector> {
  /** Reads and applies the reports of one connector's session to their end (every read it takes). */
  drainConnector(key: string, connector: Connector): Promise<number>;
}

export interface ClockExpiry {
  /** Expires the clock's orders due at its time; returns how many. */
  expireDue(limit: number, testClock: { id: string; at: number }): Promise<number>;
}

/**
 * Test clocks of the sandbox (modelled on Stripe's): a client freezes a clock at an instant, places
 * orders on it (`test_clock` of POST /v1/orders), and advances it. An advance applies, in time order,
 * everything due to the clock's orders up to the new time (executions in the phases crossed, then
 * each expiry at its instant) before it answers; orders of other clocks and of real time are not
 * touched.
 */
export class TestClockService<Connector = unknown> {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly connectors: ClockConnectors<Connector>,
    private readonly router: ClockReports<Connector>,
    private readonly expiry: ClockExpiry,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  async create(trx: Kysely<Database>, clientId: ClientId, request: TestClockCreate): Promise<TestClock> {
    const frozen = Date.parse(request.frozen_time);
    const problem = checkFrozenTime(request.frozen_time, frozen);
    if (problem !== null) throw validationError([problem]);
    const now = this.clock.now().getTime();
    const row: TestClockRow = {
      id: newId('testClock', now),
      client_id: clientId,
      name: request.name ?? null,
      frozen_time: frozen,
      created_at: now,
      deleted_at: null,
    };
    await insertTestClock(trx, row);
    return toTestClock(row);
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<TestClock> {
    return toTestClock(await this.#find(db, clientId, id));
  }

  /** A page of the client's clocks, newest first; `next` is the id of its last clock when another page follows. */
  async list(
    db: Kysely<Database>,
    clientId: ClientId,
    page: { limit: number; before?: string },
  ): Promise<{ items: TestClock[]; next: string | null }> {
    const rows = await listClientTestClocks(db, clientId, page.limit + 1, page.before);
    const slice = rows.slice(0, page.limit);
    return { items: slice.map(toTestClock), next: rows.length > page.limit ? (slice.at(-1)?.id ?? null) : null };
  }

  /** Deletes the clock for the client; its orders stay on its last time (they can still be cancelled). */
  async delete(clientId: ClientId, id: string): Promise<{ id: string; object: 'test_clock'; deleted: true }> {
    const row = await this.#find(this.db, clientId, id);
    await this.transact((trx) => markTestClockDeleted(trx, row.id, this.clock.now().getTime()));
    return { id: row.id, object: 'test_clock', deleted: true };
  }

  /** The clock's time for an order the client places on it; undefined when the client has no such clock. */
  async frozenTimeFor(db: Kysely<Database>, clientId: ClientId, id: string): Promise<number | undefined> {
    if (!isId('testClock', id)) return undefined;
    const row = await findClientTestClock(db, clientId, id);
    return row === undefined ? undefined : Number(row.frozen_time);
  }

  /**
   * Moves the clock to `frozenTime` in steps: to each expiry due on the way (in time order), reading
   * the executions of the clock's orders up to it and then expiring the orders due there, and finally
   * to the new time. The clock's stored time is each step's, so that every process reading it sees
   * only time whose consequences are applied. A concurrent advance of the same clock gets 409.
   */
  async advance(
    clientId: ClientId,
    id: string,
    frozenTime: string,
    after?: (trx: Kysely<Database>, clock: TestClock) => Promise<void>,
  ): Promise<TestClock> {
    const row = await this.#find(this.db, clientId, id);
    let at = Number(row.frozen_time);
    const target = Date.parse(frozenTime);
    const problem = checkAdvance(frozenTime, at, target);
    if (problem !== null) throw validationError([problem]);
    for (;;) {
      const expiry = await nextExpiryOnClock(this.db, row.id, target);
      const step = Math.max(at, expiry ?? target);
      if (!(await this.transact((trx) => moveTestClock(trx, row.id, at, step)))) {
        throw new ApiError('conflict', `test clock ${row.id} is being advanced by another request`);
      }
      at = step;
      await this.#readReports(row.id);
      if (expiry === null) break;
      const expired = await this.expiry.expireDue(100, { id: row.id, at });
      this.log.info({ test_clock: row.id, at: isoMillis(at), expired }, 'test clock: orders expired');
    }
    return this.transact(async (trx) => {
      const clock = toTestClock(await this.#find(trx, clientId, id));
      await after?.(trx, clock);
      return clock;
    });
  }

  /** The checks of an advance, before anything moves: the clock as it is, `advancing`. */
  async checkAdvance(db: Kysely<Database>, clientId: ClientId, id: string, frozenTime: string): Promise<TestClock> {
    const row = await this.#find(db, clientId, id);
    const problem = checkAdvance(frozenTime, Number(row.frozen_time), Date.parse(frozenTime));
    if (problem !== null) throw validationError([problem]);
    return { ...toTestClock(row), status: 'advancing' };
  }

  async #readReports(clockId: string): Promise<void> {
    for (const { rcpt_to, connector: name } of await connectorsOnClock(this.db, clockId)) {
      const connector = this.connectors.get(name, rcpt_to);
      if (connector !== undefined) await this.router.drainConnector(`${name}:${rcpt_to}`, connector);
    }
  }

  async #find(db: Kysely<Database>, clientId: ClientId, id: string): Promise<TestClockRow> {
    const row = isId('testClock', id) ? await findClientTestClock(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Test clock', id);
    return row;
  }
}

/** The stored time of a clock (deleted or not), for the connector of its orders. */
export async function clockTime(db: Kysely<Database>, id: string): Promise<number> {
  const t = await frozenTimeOf(db, id);
  if (t === undefined) throw new Error(`unknown test clock ${id}`);
  return t;
}
