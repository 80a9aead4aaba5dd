/**
 * The daily snapshot benchmark (`npm run bench:snapshot`): builds the snapshot of a day of
 * 1,000,000 orders from SQLite and compares it with a flat SHA-256 tree over as many leaves of the
 * same size, measured in the same run. Writes docs/benchmarks-snapshot.md.
 *
 * Goals (docs/audit.md): the whole build (streaming the orders, encoding and hashing the leaves,
 * storing the chunks) within 2x the flat tree, and under 256 MB of resident memory. The build runs
 * in a child process so that its peak RSS is its own, not the insert's.
 *
 * BENCH_SNAPSHOT_ORDERS overrides the day's size.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { MerkleTreeBuilder, encodeAuditLeaf, hashLeaf } from '@cauri/verifier';
import pino from 'pino';
import { createServices, openDatabase } from '../src/app.js';
import { orderLeaf } from '../src/audit/core/leaf.js';
import { parseConfig } from '../src/config/config.js';
import { MemoryRateLimitStore } from '../src/http/rate-limit.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';

// A day that is over (the system clock decides what "over" means for the build).
const DATE = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const log = (message: string) => process.stdout.write(`[bench:snapshot] ${message}\n`);

function configFor(dataDir: string, masterKey: string) {
  return parseConfig({
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: masterKey,
    CAURI_SEED: 'false',
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
    LOG_LEVEL: 'silent',
  });
}

interface BuildFigures {
  build_ms: number;
  peak_rss_mb: number;
  start_rss_mb: number;
  count: number;
  proof_p50_ms: number;
  proof_p99_ms: number;
}

/** Child: build the day, sampling RSS, then time proofs. Prints BuildFigures as JSON. */
async function buildChild(dataDir: string, masterKey: string): Promise<void> {
  const config = configFor(dataDir, masterKey);
  const storage = await openDatabase(config);
  const services = createServices(
    config,
    storage,
    Buffer.from(masterKey, 'hex'),
    systemClock,
    new MemoryRateLimitStore(),
    pino({ level: 'silent' }),
  );
  await services.keys.current('attestation');
  const startRss = process.memoryUsage().rss;
  let peak = startRss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  const [outcome] = await services.audit.build(DATE);
  const buildMs = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (outcome?.outcome !== 'built') throw new Error(`build: ${JSON.stringify(outcome)}`);
  await services.audit.advanceAnchoring();

  const owner = await storage.db.selectFrom('orders').select('client_id').limit(1).executeTakeFirstOrThrow();
  const sample: string[] = [];
  const all = storage.db.selectFrom('orders').select('id').orderBy('id');
  for (let i = 0; i < 500; i++) {
    const row = await all
      .offset(Math.floor(Math.random() * outcome.count))
      .limit(1)
      .executeTakeFirstOrThrow();
    sample.push(row.id);
  }
  const times: number[] = [];
  for (const id of sample) {
    const t0 = performance.now();
    await services.audit.proof(storage.db, owner.client_id as never, DATE, id);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  await storage.close();
  const figures: BuildFigures = {
    build_ms: buildMs,
    peak_rss_mb: peak / 2 ** 20,
    start_rss_mb: startRss / 2 ** 20,
    count: outcome.count,
    proof_p50_ms: times[Math.floor(times.length / 2)]!,
    proof_p99_ms: times[Math.floor(times.length * 0.99)]!,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** Inserts `n` orders of DATE with one prepared statement in one transaction, as the order service stores them. */
function insertOrders(path: string, n: number): string {
  const db = new SqliteDatabase(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const columns = [
    'id',
    'client_id',
    'status',
    'rcpt_to',
    'kyc_attestation_id',
    'kyc_attestation_sha256',
    'subject_id',
    'kyc_level',
    'instrument',
    'side',
    'qty',
    'limit_price_cents',
    'reference_price_cents',
    'filled_qty',
    'fill_notional_cents',
    'failure_reason',
    'client_metadata',
    'connector',
    'last_report_seq',
    'route_attempts',
    'next_route_at',
    'route_lease_until',
    'cancel_requested_at',
    'created_at',
    'updated_at',
  ];
  const insert = db.prepare(`insert into orders (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  const start = Date.parse(`${DATE}T00:00:00.000Z`);
  const client = newId('client', start);
  const attestation = newId('attestation', start);
  const sha = randomBytes(32).toString('hex');
  let sampleLeaf = '';
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const created = start + Math.floor((i * 86_399_999) / Math.max(1, n - 1));
      const id = newId('order', created);
      const row = [
        id,
        client,
        'filled',
        'sgi_01jd0000000000000000000000',
        attestation,
        sha,
        'subject-1',
        'KYC3',
        'SNTS.BRVM',
        i % 2 ? 'buy' : 'sell',
        1 + (i % 1000),
        i % 4 ? 1_500_000 + (i % 100_000) : null,
        1_550_000,
        1 + (i % 1000),
        '0',
        null,
        null,
        'sandbox',
        0,
        1,
        null,
        null,
        null,
        created,
        created,
      ] as const;
      insert.run(...row);
      if (i === 0) {
        sampleLeaf = encodeAuditLeaf(
          orderLeaf({
            id,
            rcpt_to: row[3],
            kyc_attestation_id: attestation,
            kyc_attestation_sha256: sha,
            instrument: row[8],
            side: row[9],
            qty: row[10],
            limit_price_cents: row[11],
            created_at: created,
          }),
        );
      }
    }
  })();
  db.close();
  return sampleLeaf;
}

/** The reference: RFC 9162 leaf hashes of n distinct leaves of `leafBytes` bytes, folded by MerkleTreeBuilder. */
function flatTree(n: number, leafBytes: number): number {
  const leaf = Buffer.alloc(leafBytes, 0x61);
  const started = performance.now();
  const tree = new MerkleTreeBuilder();
  for (let i = 0; i < n; i++) {
    leaf.writeUInt32BE(i, 0);
    tree.push(hashLeaf(leaf));
  }
  tree.root();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const n = Number(process.env.BENCH_SNAPSHOT_ORDERS ?? 1_000_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-bench-snapshot-'));
  const masterKey = randomBytes(32).toString('hex');
  try {
    if (process.env.BENCH_SNAPSHOT_KEEP !== undefined) log(`data folder ${dataDir}`);
    const storage = await openDatabase(configFor(dataDir, masterKey));
    await storage.close();
    let t0 = performance.now();
    const leaf = insertOrders(join(dataDir, 'cauri.sqlite'), n);
    log(`inserted ${n} orders in ${((performance.now() - t0) / 1000).toFixed(1)} s (leaf of ${Buffer.byteLength(leaf)} bytes)`);
    const flat = [flatTree(n, Buffer.byteLength(leaf)), flatTree(n, Buffer.byteLength(leaf))];
    const flatMs = Math.min(...flat);
    log(`flat SHA-256 tree over ${n} leaves: ${flatMs.toFixed(0)} ms`);
    t0 = performance.now();
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--build', dataDir, masterKey], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`build child failed: ${child.stderr}`);
    const figures = JSON.parse(child.stdout.trim().split('\n').pop()!) as BuildFigures;
    log(JSON.stringify(figures));
    const ratio = figures.build_ms / flatMs;
    const rows = [
      ['Orders in the day', String(figures.count)],
      ['Flat SHA-256 tree (RFC 9162 leaf + node hashes, same leaf size), best of 2', `${(flatMs / 1000).toFixed(2)} s`],
      ['Snapshot build (stream from SQLite, encode, hash, store chunks)', `${(figures.build_ms / 1000).toFixed(2)} s`],
      ['Ratio build / flat tree (goal <= 2)', `${ratio.toFixed(2)} ${ratio <= 2 ? '(met)' : '(missed)'}`],
      [
        'Peak RSS of the building process (goal < 256 MB)',
        `${figures.peak_rss_mb.toFixed(0)} MB ${figures.peak_rss_mb < 256 ? '(met)' : '(missed)'} (${figures.start_rss_mb.toFixed(0)} MB before the build)`,
      ],
      ['Inclusion proof, 500 random orders, p50 / p99', `${figures.proof_p50_ms.toFixed(2)} ms / ${figures.proof_p99_ms.toFixed(2)} ms`],
    ];
    const report = [
      '# Benchmark: daily audit snapshot',
      '',
      'Generated by `npm run bench:snapshot` (bench/snapshot.ts); do not edit by hand.',
      '',
      `Run ${new Date().toISOString()} on ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, SQLite (WAL, synchronous NORMAL).`,
      '',
      '| Measure | Value |',
      '|---|---|',
      ...rows.map(([a, b]) => `| ${a} | ${b} |`),
      '',
      'The day is inserted first with one prepared better-sqlite3 statement in one transaction; the build then runs',
      'in a fresh child process (`AuditService.build`, pages of 5,000 orders by id, 1,024-leaf chunks, one write',
      'transaction per 16 chunks). Proof times include reading the order, its chunk and the chunk roots.',
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'docs/benchmarks-snapshot.md'), report);
    log('wrote docs/benchmarks-snapshot.md');
  } finally {
    if (process.env.BENCH_SNAPSHOT_KEEP === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--build') await buildChild(process.argv[3]!, process.argv[4]!);
else await main();
