/**
 * The references of `npm run bench:webhooks`, in their own process: a bare undici sender. It reads
 * the stored events and endpoints of the prepared database (read-only), serialises each event's
 * envelope exactly as the delivery worker does, before the clock starts, then posts every body once
 * to its endpoint's URL with `BENCH_CONCURRENCY` requests in flight, signing each post anew with
 * `signatureHeader` and sending the worker's headers. No database, no leases, no records, no address
 * checks, no timeouts: the floor of what delivering these bodies costs. Prints one JSON line.
 *
 * With BENCH_RECORD_SQLITE (a database file to create), it is the durable floor instead: each post's
 * outcome (idempotency key, status, duration, time) is inserted into one table of that file (WAL,
 * synchronous=FULL), the posts that completed in one turn of the event loop committed together, and
 * a lane takes its next post only once its record is committed, as the worker holds an attempt's
 * slot until its record is durable. One insert per attempt into a table with its primary key and
 * nothing else: no delivery rows, no fan-out, no leases, no second index.
 *
 * With BENCH_BARE_API=dispatch it posts through undici's low-level `dispatch()` with a handler that
 * keeps the status and drops the body, as the worker's sender does, instead of `request()` (a promise
 * and a readable stream for each response body, which `dump()` then drains).
 *
 * Environment: BENCH_SQLITE (the database file), BENCH_ENDPOINTS_FILE (JSON: [{ id, clientId, url,
 * secret }]), BENCH_CONCURRENCY, BENCH_RECORD_SQLITE (optional), BENCH_BARE_API (`request`, the
 * default, or `dispatch`).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { Agent, request, type Dispatcher } from 'undici';
import { envelopeOf } from '../src/events/event.service.js';
import type { EventRow } from '../src/events/event.table.js';
import { serializeEnvelope } from '../src/events/envelope.js';
import { signatureHeader } from '../src/webhooks/core/signature.js';
import type { BenchEndpoint } from './webhook-service.js';

export interface BareResult {
  posts: number;
  errors: number;
  concurrency: number;
  elapsedMs: number;
  perSecond: number;
  /** CPU time of the sender process (every thread, user and system) per post, in µs. */
  cpuUsPerPost: number;
}

interface Job {
  url: string;
  secret: string;
  body: string;
  idempotencyKey: string;
}

function loadJobs(): Job[] {
  const endpoints = JSON.parse(readFileSync(process.env.BENCH_ENDPOINTS_FILE ?? '', 'utf8')) as BenchEndpoint[];
  const byClient = new Map(endpoints.map((e) => [e.clientId, e]));
  const db = new SqliteDatabase(process.env.BENCH_SQLITE ?? '', { readonly: true });
  try {
    const rows = db.prepare("select * from events where type = 'order.created' order by id").all() as EventRow[];
    return rows.flatMap((row) => {
      const endpoint = row.client_id === null ? undefined : byClient.get(row.client_id);
      if (endpoint === undefined) return [];
      const envelope = envelopeOf(row);
      return [
        {
          url: endpoint.url,
          secret: endpoint.secret,
          body: serializeEnvelope({ ...envelope, data: envelope.data as Record<string, unknown> }),
          idempotencyKey: randomUUID(),
        },
      ];
    });
  } finally {
    db.close();
  }
}

/** One POST through `dispatch()`: the status once the response has ended (the body is dropped). */
function dispatchPost(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let status = 0;
    agent.dispatch({ origin: url.origin, path: url.pathname, method: 'POST', headers, body }, {
      // undici takes a handler without onRequestStart for one of its older interface.
      onRequestStart: () => undefined,
      onResponseStart: (_controller, statusCode) => {
        status = statusCode;
      },
      onResponseData: () => undefined,
      onResponseEnd: () => resolve(status),
      onResponseError: (_controller, error) => reject(error),
    } satisfies Dispatcher.DispatchHandler);
  });
}

interface AttemptRecord {
  key: string;
  status: number | null;
  durationMs: number;
  at: number;
}

/** Durable records of attempts, the records of one event-loop turn committed together; null without a file. */
function recorder(path: string | undefined): ((record: AttemptRecord) => Promise<void>) | null {
  if (path === undefined || path === '') return null;
  const db = new SqliteDatabase(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'create table attempts (idempotency_key text primary key, status_code integer, duration_ms integer not null, attempted_at integer not null)',
  );
  const insert = db.prepare('insert into attempts values (?, ?, ?, ?)');
  const commit = db.transaction((batch: AttemptRecord[]) => {
    for (const r of batch) insert.run(r.key, r.status, r.durationMs, r.at);
  });
  let queue: { record: AttemptRecord; done: () => void }[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    commit(batch.map((b) => b.record));
    for (const b of batch) b.done();
  };
  return (record) =>
    new Promise<void>((done) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ record, done });
    });
}

async function main(): Promise<BareResult> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? '');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('BENCH_CONCURRENCY must be a whole number >= 1');
  const jobs = loadJobs();
  const api = process.env.BENCH_BARE_API ?? 'request';
  if (api !== 'request' && api !== 'dispatch') throw new Error('BENCH_BARE_API must be request or dispatch');
  // Parsed before the clock starts, as the worker parses each endpoint's URL once.
  const urls = new Map(jobs.map((job) => [job.url, new URL(job.url)]));
  const record = recorder(process.env.BENCH_RECORD_SQLITE);
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const lane = async (): Promise<void> => {
    for (;;) {
      const job = jobs[next++];
      if (job === undefined) return;
      const at = Date.now();
      const headers = {
        'content-type': 'application/json',
        'x-cauri-signature': signatureHeader([job.secret], Math.floor(at / 1000), job.body),
        'x-cauri-idempotency-key': job.idempotencyKey,
        'user-agent': 'Cauri-Webhooks/1.0',
      };
      const sent = performance.now();
      let status: number | null = null;
      try {
        if (api === 'dispatch') {
          status = await dispatchPost(agent, urls.get(job.url) as URL, headers, job.body);
        } else {
          const response = await request(job.url, { dispatcher: agent, method: 'POST', headers, body: job.body });
          await response.body.dump();
          status = response.statusCode;
        }
        if (status < 200 || status >= 300) errors++;
      } catch {
        errors++;
      }
      if (record !== null) await record({ key: job.idempotencyKey, status, durationMs: Math.round(performance.now() - sent), at });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await agent.close();
  return {
    posts: jobs.length,
    errors,
    concurrency,
    elapsedMs,
    perSecond: (jobs.length / elapsedMs) * 1000,
    cpuUsPerPost: (cpu.user + cpu.system) / jobs.length,
  };
}

try {
  process.stdout.write(`${JSON.stringify(await main())}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`[bench:webhooks:bare] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
