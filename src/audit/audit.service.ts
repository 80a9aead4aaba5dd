import { randomBytes } from 'node:crypto';
import { encodeAuditLeaf, hashLeaf } from '@cauri/verifier';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { ApiError, notFound, validationError } from '../lib/errors.js';
import { ID_TIME_MARGIN_MS, idFloorAt, isId, type ClientId } from '../lib/ids.js';
import type { KeyRing } from '../keys/key-ring.js';
import { findClientOrder } from '../orders/order.repository.js';
import type { Transact } from '../storage/database.js';
import { tryLockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Anchor } from './anchors/anchor.js';
import {
  claimAnchoring,
  claimBuild,
  countDayOrders,
  dayOrdersPage,
  deleteChunks,
  dueForAnchoring,
  earliestSnapshotDate,
  findChunkFor,
  findSnapshot,
  firstOrderCreatedAt,
  insertChunks,
  latestSnapshotDate,
  orderVersions,
  renewLease,
  updateHeld,
} from './audit.repository.js';
import type { AuditSnapshot, SnapshotProof } from './audit.schemas.js';
import type { AuditChunkTable, AuditSnapshotRow } from './audit.table.js';
import { ChunkedTreeBuilder, chunkedInclusionProof, splitHashes } from './core/chunked-tree.js';
import { DAY_MS, addDays, dateOf, dayStartMs, isCalendarDate } from '../lib/dates.js';
import { isClosed, lastClosedDay, orderIdFloor } from './core/days.js';
import { encodeOrderLeaf, leafHashOfText, orderLeaf } from './core/leaf.js';
import { toSnapshot } from './audit.mapping.js';
import { SnapshotAnchoring } from './anchoring.js';

const eventIdFloor = (ms: number): string => idFloorAt('event', ms);

export interface AuditOptions {
  livemode: boolean;
  dialect: DialectName;
  /** This process, in leases. */
  owner?: string;
  /** Time after midnight before the day is built (orders stamped 23:59:59.999 commit a moment later). */
  settleMs?: number;
  /** Lease of a build or an anchoring step; renewed while a build streams. */
  leaseMs?: number;
  /** Leaves per stored chunk, a power of two (see core/chunked-tree.ts). */
  chunkSize?: number;
  /** Orders per page read from the database. */
  pageSize?: number;
  random?: () => number;
}

export type BuildOutcome =
  | { date: string; outcome: 'built'; merkle_root: string; count: number }
  | { date: string; outcome: 'exists'; state: AuditSnapshotRow['state'] }
  | { date: string; outcome: 'busy' };

/** Chunks written per transaction while a build streams (16 x 1024 leaves = 512 KiB). */
const CHUNKS_PER_WRITE = 16;

/**
 * The daily audit snapshots (docs/audit.md): builds a day's Merkle tree from its
 * orders, anchors the root (anchoring.ts), signs and serves the snapshot, and cuts inclusion proofs.
 *
 * One snapshot per day across processes: the day's row (primary key `date`) is created in state
 * `building` under a lease, so one process builds it; PostgreSQL also takes an advisory lock while
 * claiming. Days are built in order, each chained to the previous day's root.
 */
export class AuditService {
  readonly #owner: string;
  readonly #settleMs: number;
  readonly #leaseMs: number;
  readonly #chunkSize: number;
  readonly #pageSize: number;
  readonly #anchoring: SnapshotAnchoring;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    keys: KeyRing,
    anchor: Anchor,
    private readonly clock: Clock,
    private readonly options: AuditOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.#owner = options.owner ?? `${process.pid}-${randomBytes(4).toString('hex')}`;
    this.#settleMs = options.settleMs ?? 2 * 60_000;
    this.#leaseMs = options.leaseMs ?? 5 * 60_000;
    this.#chunkSize = options.chunkSize ?? 1024;
    this.#pageSize = options.pageSize ?? 5000;
    this.#anchoring = new SnapshotAnchoring({
      transact,
      keys,
      anchor,
      clock,
      owner: this.#owner,
      livemode: options.livemode,
      random: options.random ?? Math.random,
      log,
    });
    new ChunkedTreeBuilder(this.#chunkSize); // validates the chunk size at construction
  }

  get settleMs(): number {
    return this.#settleMs;
  }

  /**
   * The first day of the chain: the earliest snapshot, else the day of the first order; undefined
   * when there is neither.
   */
  async chainStart(): Promise<string | undefined> {
    const earliest = await earliestSnapshotDate(this.db);
    if (earliest !== undefined) return earliest;
    const first = await firstOrderCreatedAt(this.db);
    return first === undefined ? undefined : dateOf(first);
  }

  /**
   * Builds every missing day up to `until` (default: the last closed day), in order. Stops at the
   * first day another process is building: the days after it chain to its root.
   */
  async catchUp(now = this.clock.now().getTime(), until = lastClosedDay(now, this.#settleMs)): Promise<BuildOutcome[]> {
    const start = await this.chainStart();
    if (start === undefined || until < start) return [];
    const latest = await latestSnapshotDate(this.db);
    // Rows are created in date order, so only the latest row can still be unfinished.
    let day = start;
    if (latest !== undefined) day = (await findSnapshot(this.db, latest))?.state === 'building' ? latest : addDays(latest, 1);
    const outcomes: BuildOutcome[] = [];
    for (; day <= until; day = addDays(day, 1)) {
      const outcome = await this.#buildDay(day, now);
      outcomes.push(outcome);
      if (outcome.outcome === 'busy') break;
    }
    return outcomes;
  }

  /**
   * On demand (`cauri audit snapshot --date`): builds `date` and any missing day before it. The day
   * must be over (plus the settling time). A day before the chain's first day cannot be built: the
   * chain would have two starts. With no order and no snapshot at all, `date` starts the chain.
   */
  async build(date: string, now = this.clock.now().getTime()): Promise<BuildOutcome[]> {
    if (!isCalendarDate(date)) throw new RangeError(`${date} is not a calendar day (YYYY-MM-DD)`);
    if (!isClosed(date, now, this.#settleMs))
      throw new RangeError(
        `${date} is not over yet; its snapshot can be built from ${new Date(dayStartMs(date) + DAY_MS + this.#settleMs).toISOString()}`,
      );
    const existing = await findSnapshot(this.db, date);
    if (existing !== undefined && existing.state !== 'building') return [{ date, outcome: 'exists', state: existing.state }];
    const start = (await this.chainStart()) ?? date;
    if (date < start) throw new RangeError(`${date} is before the first day of the snapshot chain (${start})`);
    const outcomes = await this.catchUp(now, date);
    return outcomes.length > 0 ? outcomes : [{ date, outcome: 'busy' }];
  }

  /**
   * Recomputes a built day's root from the orders, writing nothing (`cauri audit verify`): a rebuild
   * gives the same root, or the orders changed under the snapshot.
   */
  async recompute(date: string): Promise<{ merkle_root: string; count: number }> {
    const tree = new ChunkedTreeBuilder(this.#chunkSize);
    for await (const page of this.#pages(date)) for (const row of page) tree.push(leafHashOfText(encodeOrderLeaf(row)));
    const { root, count } = tree.finish();
    return { merkle_root: Buffer.from(root).toString('hex'), count };
  }

  async #buildDay(date: string, now: number): Promise<BuildOutcome> {
    const claimed = await this.transact(async (trx) => {
      if (!(await tryLockForTransaction(trx, this.options.dialect, `audit-snapshot:${date}`))) return undefined;
      const row = await claimBuild(trx, date, this.#owner, now, now + this.#leaseMs);
      // A build taken over from a process whose lease ran out starts again from nothing.
      if (row.state === 'building' && row.lease_owner === this.#owner) await deleteChunks(trx, date);
      return row;
    });
    if (claimed === undefined) return { date, outcome: 'busy' };
    if (claimed.state !== 'building') return { date, outcome: 'exists', state: claimed.state };
    if (claimed.lease_owner !== this.#owner) return { date, outcome: 'busy' };

    const previousRoot = await this.#previousRoot(date);
    if (previousRoot === 'missing') return { date, outcome: 'busy' };

    const tree = new ChunkedTreeBuilder(this.#chunkSize);
    let pending: AuditChunkTable[] = [];
    let chunkFirstId: string | null = null;
    const flush = async (final: Partial<AuditSnapshotRow> | null): Promise<boolean> =>
      this.transact(async (trx) => {
        const leaseUntil = this.clock.now().getTime() + this.#leaseMs;
        if (!(await renewLease(trx, date, 'building', this.#owner, this.clock.now().getTime(), leaseUntil))) return false;
        await insertChunks(trx, pending);
        if (final !== null) return updateHeld(trx, date, 'building', this.#owner, final);
        return true;
      });

    for await (const page of this.#pages(date)) {
      for (const row of page) {
        chunkFirstId ??= row.id;
        const chunk = tree.push(leafHashOfText(encodeOrderLeaf(row)));
        if (chunk !== null) {
          pending.push({ date, chunk_index: chunk.index, first_order_id: chunkFirstId, leaf_hashes: chunk.leafHashes });
          chunkFirstId = null;
        }
      }
      if (pending.length >= CHUNKS_PER_WRITE) {
        if (!(await flush(null))) return { date, outcome: 'busy' };
        pending = [];
      }
    }
    const result = tree.finish();
    if (result.last !== null)
      pending.push({ date, chunk_index: result.last.index, first_order_id: chunkFirstId!, leaf_hashes: result.last.leafHashes });

    const { start, end } = this.#bounds(date);
    const counted = await countDayOrders(this.db, start, end);
    if (counted !== result.count) {
      // An order whose id lies outside the day's id range (see orderIdFloor): never made by this
      // service. Refuse rather than publish a snapshot that misses it.
      throw new Error(`audit snapshot ${date}: ${counted} orders were created that day but ${result.count} were read in id order`);
    }
    const merkleRoot = Buffer.from(result.root).toString('hex');
    const at = this.clock.now().getTime();
    const done = await flush({
      state: 'built',
      merkle_root: merkleRoot,
      count: result.count,
      previous_merkle_root: previousRoot,
      chunk_size: this.#chunkSize,
      chunk_roots: result.chunkRoots,
      built_at: at,
      next_anchor_at: at,
      lease_owner: null,
      lease_until: 0,
      updated_at: at,
    });
    if (!done) return { date, outcome: 'busy' };
    this.log.info({ date, merkle_root: merkleRoot, count: result.count }, 'audit snapshot built');
    return { date, outcome: 'built', merkle_root: merkleRoot, count: result.count };
  }

  /** The previous day's root; null for the chain's first day; 'missing' while the previous day is unfinished. */
  async #previousRoot(date: string): Promise<string | null | 'missing'> {
    const previous = await findSnapshot(this.db, addDays(date, -1));
    if (previous !== undefined) return previous.merkle_root ?? 'missing';
    const earliest = await earliestSnapshotDate(this.db);
    if (earliest !== undefined && earliest < date) throw new Error(`audit snapshot ${date}: the chain has a gap before it`);
    return null;
  }

  #bounds(date: string): { start: number; end: number; idFrom: string; idTo: string } {
    const start = dayStartMs(date);
    const end = start + DAY_MS;
    return { start, end, idFrom: orderIdFloor(start - ID_TIME_MARGIN_MS), idTo: orderIdFloor(end + ID_TIME_MARGIN_MS) };
  }

  /** The day's orders in id order, a page at a time (keyset pagination): memory is one page. */
  async *#pages(date: string) {
    const bounds = this.#bounds(date);
    let after: string | null = null;
    for (;;) {
      const page = await dayOrdersPage(this.db, bounds, after, this.#pageSize);
      if (page.length === 0) return;
      // The fast encoding is tested equal to the verifier's; one leaf a page re-checks it here.
      if (encodeOrderLeaf(page[0]!) !== encodeAuditLeaf(orderLeaf(page[0]!)))
        throw new Error(`audit snapshot ${date}: leaf encodings disagree for ${page[0]!.id}`);
      yield page;
      if (page.length < this.#pageSize) return;
      after = page[page.length - 1]!.id;
    }
  }

  /**
   * Moves every due snapshot one step towards anchored: submit the root, then poll the receipt.
   * On the receipt the snapshot is signed (anchored_at is a signed member), served, and
   * `audit.snapshot` is emitted, in one transaction and once.
   */
  async advanceAnchoring(now = this.clock.now().getTime()): Promise<{ date: string; state: AuditSnapshotRow['state'] }[]> {
    const steps: { date: string; state: AuditSnapshotRow['state'] }[] = [];
    for (const date of await dueForAnchoring(this.db, now, 50)) {
      const row = await this.transact((trx) => claimAnchoring(trx, date, this.#owner, now, now + this.#leaseMs));
      if (row === undefined) continue;
      steps.push({ date, state: await this.#anchoring.step(row) });
    }
    return steps;
  }

  /** `GET /v1/audit/snapshots/{date}`: the snapshot once anchored; 404 before (and for a future day). */
  async snapshot(db: Kysely<Database>, date: string): Promise<AuditSnapshot> {
    return toSnapshot(await this.#served(db, date));
  }

  /** `GET /v1/audit/snapshots/{date}/proofs/{order_id}`: the caller's own orders only. */
  async proof(db: Kysely<Database>, clientId: ClientId, date: string, orderId: string): Promise<SnapshotProof> {
    const row = await this.#served(db, date);
    const order = isId('order', orderId) ? await findClientOrder(db, clientId, orderId) : undefined;
    if (order === undefined) throw notFound('Order', orderId);
    const day = dateOf(order.created_at);
    if (day !== date) throw new ApiError('not_found', `Order ${orderId} is not in the snapshot of ${date}: it was created on ${day}`);
    const chunk = await findChunkFor(db, date, orderId);
    const leaves = chunk === undefined ? [] : splitHashes(chunk.leaf_hashes);
    const find = (text: string) => {
      const hashed = hashLeaf(Buffer.from(text, 'utf8'));
      return { leaf: text, leafHash: hashed, position: leaves.findIndex((h) => Buffer.from(hashed).equals(h)) };
    };
    let found = find(encodeAuditLeaf(orderLeaf(order)));
    if (found.position < 0 && chunk !== undefined) {
      // Amended since the day was built: the tree holds the quantity and limit the order had then,
      // one of the versions its events recorded.
      const versions = await orderVersions(db, clientId, orderId, eventIdFloor(order.created_at - ID_TIME_MARGIN_MS));
      for (const data of versions.reverse()) {
        const { qty, limit_price_cents } = JSON.parse(data) as { qty: number; limit_price_cents?: number | null };
        found = find(encodeAuditLeaf(orderLeaf({ ...order, qty, limit_price_cents: limit_price_cents ?? null })));
        if (found.position >= 0) break;
      }
    }
    const { leaf, leafHash, position } = found;
    if (chunk === undefined || position < 0)
      throw new Error(`audit snapshot ${date} does not hold order ${orderId} in any recorded version`);
    const path = chunkedInclusionProof(leaves, position, splitHashes(row.chunk_roots!), chunk.chunk_index);
    return {
      date,
      order_id: orderId,
      leaf_index: chunk.chunk_index * row.chunk_size! + position,
      tree_size: row.count!,
      leaf,
      leaf_hash: Buffer.from(leafHash).toString('hex'),
      audit_path: path.map((h) => Buffer.from(h).toString('hex')),
      merkle_root: row.merkle_root!,
    };
  }

  /** The row of an anchored snapshot; 422 for a string that is not a calendar day, 404 otherwise. */
  async #served(db: Kysely<Database>, date: string): Promise<AuditSnapshotRow> {
    if (!isCalendarDate(date))
      throw validationError([{ field: 'date', rule: 'format', value: date }], 'Invalid date: expected a calendar day as YYYY-MM-DD');
    const row = await findSnapshot(db, date);
    if (row === undefined || row.state !== 'anchored') throw notFound('Snapshot', date);
    return row;
  }

  /** The stored row of a day, for the command line. */
  async status(date: string): Promise<AuditSnapshotRow | undefined> {
    return findSnapshot(this.db, date);
  }
}
