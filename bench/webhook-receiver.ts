/**
 * The webhook receiver of `npm run bench:webhooks`, in its own process: a bare `node:http` server
 * that answers every POST with 204 as soon as the body has arrived, and keeps, per phase, the
 * number of requests, the distinct idempotency keys (to catch an attempt sent twice), the first and
 * last arrival, and each request's event-to-arrival latency: `Date.now() - Date.parse(created_at)`
 * of the envelope (both processes read the same machine clock).
 *
 *   POST /reset?since=<epoch ms>   starts a new phase; only envelopes created at or after `since` count
 *   GET  /stats                    the phase's figures as JSON
 *
 * Prints `{"address":"http://127.0.0.1:<port>"}` once listening (PORT=0 picks a free port).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceiverStats {
  /** Requests received in the phase (including those created before `since`). */
  requests: number;
  /** Requests whose envelope was created at or after `since`: the ones the latency figures cover. */
  counted: number;
  /** Distinct `X-Cauri-Idempotency-Key` values among all requests of the phase. */
  distinctKeys: number;
  /** Requests without a readable `created_at`. */
  unreadable: number;
  firstArrival: number | null;
  lastArrival: number | null;
  latency: { p50: number; p90: number; p99: number; max: number; mean: number } | null;
}

const CREATED_AT = '"created_at":"';

let since = 0;
let requests = 0;
let unreadable = 0;
let keys = new Set<string>();
let latencies: number[] = [];
let firstArrival: number | null = null;
let lastArrival: number | null = null;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

function stats(): ReceiverStats {
  const sorted = Float64Array.from(latencies).sort();
  const list = Array.from(sorted);
  return {
    requests,
    counted: latencies.length,
    distinctKeys: keys.size,
    unreadable,
    firstArrival,
    lastArrival,
    latency:
      list.length === 0
        ? null
        : {
            p50: percentile(list, 50),
            p90: percentile(list, 90),
            p99: percentile(list, 99),
            max: list[list.length - 1] ?? 0,
            mean: list.reduce((a, b) => a + b, 0) / list.length,
          },
  };
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats()));
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/reset') === true) {
    req.resume();
    since = Number(new URL(req.url, 'http://x').searchParams.get('since') ?? '0');
    requests = 0;
    unreadable = 0;
    keys = new Set();
    latencies = [];
    firstArrival = null;
    lastArrival = null;
    res.writeHead(204).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204).end();
    requests++;
    firstArrival ??= now;
    lastArrival = now;
    const key = req.headers['x-cauri-idempotency-key'];
    if (typeof key === 'string') keys.add(key);
    // The envelope's members come in a fixed order (id, type, created_at, ...): no need to parse it all.
    const head = Buffer.concat(chunks).subarray(0, 256).toString('utf8');
    const at = head.indexOf(CREATED_AT);
    const created = at < 0 ? NaN : Date.parse(head.slice(at + CREATED_AT.length, at + CREATED_AT.length + 24));
    if (Number.isNaN(created)) unreadable++;
    else if (created >= since) latencies.push(now - created);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT ?? '0'), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ address: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
