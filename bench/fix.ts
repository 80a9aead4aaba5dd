/**
 * The FIX connector's scenario of `npm run bench`, run by bench/run.ts inside a network namespace
 * whose one interface is loopback (QuickFIX's acceptors listen on every address). One `cauri serve`
 * (sandbox mode, SQLite with synchronous=FULL, workers on) has two partners: "Executor Titres",
 * reached over FIX 4.4 at QuickFIX's `executor` (which fills every limit order at once), and the
 * simulated Baobab Securities (the sandbox connector). The same order, a limit buy of one KOLA.BRVM
 * at the top of its price band (marketable at both), goes to each:
 *
 * 1. throughput: autocannon on `POST /v1/orders`, the two partners in alternating rounds;
 * 2. hand-over latency: orders one at a time to each partner, each timed from the moment its POST
 *    is sent to its `order.routed` and `order.executed` events (their `created_at`, on the same
 *    machine's clock), and as the POST's round trip.
 *
 * Writes its figures as JSON to BENCH_FIX_OUTPUT. Settings come from run.ts: BENCH_CONNECTIONS,
 * BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_FIX_PROBE_ORDERS; BENCH_CPU_PROF for a profile.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SANDBOX_PARTNERS } from '../src/partners/sandbox-seed.js';
import { startExecutor } from './fix-executor.js';
import { measure, type Measurement } from './load.js';
import { readPauses, type PauseReading } from './service-pauses.js';
import { freePort, killAllChildren, runNode, spawnServer, type ServerProcess } from './processes.js';
import { WriterProbe } from './writer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/cauri.cjs');
const log = (message: string) => process.stdout.write(`[bench:fix] ${message}\n`);

export interface SideResult {
  /** Mean of the rounds' rates, and the worst round's p50 and p99 (ms), as for every scenario. */
  rps: number;
  p50: number;
  p99: number;
  rounds: number[];
  /** Seconds after each round until every order of it was executed (its fills applied). */
  drains: number[];
  /** Orders answered over the rounds' time and their drains: orders carried through to execution a second. */
  executedRps: number;
  /** The SQLite writer and CPU paragraph of the throughput runs. */
  writerNote: string;
}

export interface LatencyFigures {
  orders: number;
  /** Milliseconds: p50, p99 and max of each measure. */
  postToRouted: Percentiles;
  postToExecuted: Percentiles;
  createdToRouted: Percentiles;
  roundTrip: Percentiles;
}

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
}

export interface FixBenchResult {
  fix: SideResult;
  sandbox: SideResult;
  latency: { fix: LatencyFigures; sandbox: LatencyFigures };
  /** The FIX session's counters after the run (messages each way). */
  fixMessages: { sent: number; received: number };
  /** What paused the service during the one-at-a-time probe (null when its metrics were not readable). */
  probePauses: PauseReading | null;
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return Number(raw);
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

async function expectJson<T>(res: Response, status: number, what: string): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

const sample = (text: string, series: string) =>
  Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${series} `))
      ?.slice(series.length + 1) ?? 'NaN',
  );

async function main(): Promise<void> {
  const output = process.env.BENCH_FIX_OUTPUT;
  if (output === undefined || output === '') throw new Error('BENCH_FIX_OUTPUT must name the file for the figures');
  const settings = {
    connections: positiveInteger('BENCH_CONNECTIONS', 50),
    duration: positiveInteger('BENCH_DURATION', 10),
    warmup: Number(process.env.BENCH_WARMUP ?? '2'),
    rounds: positiveInteger('BENCH_ROUNDS', 5),
    probeOrders: positiveInteger('BENCH_FIX_PROBE_ORDERS', 300),
  };
  const cpuProf = process.env.BENCH_CPU_PROF === undefined || process.env.BENCH_CPU_PROF === '' ? null : process.env.BENCH_CPU_PROF;
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-bench-fix-'));
  const servers: ServerProcess[] = [];
  const executor = await startExecutor(await freePort());
  try {
    const env: Record<string, string> = {
      CAURI_MODE: 'sandbox',
      CAURI_DATA_DIR: dataDir,
      CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
      CAURI_SQLITE_SYNCHRONOUS: 'FULL',
      CAURI_SANDBOX_MARKET_HOURS: 'always',
      CAURI_RATE_LIMIT_SANDBOX: '10000000',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATABASE_URL: '',
      REDIS_URL: '',
      CAURI_PUBLIC_URL: '',
    };
    const created = JSON.parse(
      await runNode(CLI, ['clients', 'create', '--name', 'bench-fix', '--json'], { ...env, LOG_LEVEL: 'silent' }, dataDir),
    ) as { client_id: string; client_secret: string };
    const partnersFile = join(dataDir, 'fix-partner.json');
    const fix = {
      host: '127.0.0.1',
      port: executor.port,
      sender_comp_id: 'CAURI',
      target_comp_id: 'EXEC',
      tls: false,
      account: 'CAURI-BENCH',
    };
    writeFileSync(
      partnersFile,
      JSON.stringify([{ name: 'Executor Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix }]),
    );
    const imported = JSON.parse(
      await runNode(CLI, ['partners', 'import', partnersFile, '--json'], { ...env, LOG_LEVEL: 'silent' }, dataDir),
    ) as { applied: { id: string }[] };
    const fixPartner = imported.applied[0]?.id ?? '';
    const sandboxPartner = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id ?? '';

    const port = await freePort();
    const service = await spawnServer({
      name: 'cauri serve (FIX and sandbox partners)',
      script: CLI,
      args: ['serve'],
      env: { ...env, PORT: String(port) },
      cwd: dataDir,
      nodeArgs: cpuProf === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`],
      ready: { kind: 'poll', base: `http://127.0.0.1:${port}`, path: '/readyz' },
    });
    servers.push(service);
    const deadline = Date.now() + 30_000;
    while (sample(await (await fetch(`${service.base}/metrics`)).text(), `cauri_fix_session_logged_on{partner="${fixPartner}"}`) !== 1) {
      if (Date.now() > deadline) throw new Error('the FIX session to the executor did not log on within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    log(`service at ${service.base}; FIX session of ${fixPartner} logged on to the executor at port ${executor.port}`);

    const tokenBody = await expectJson<{ access_token: string }>(
      await fetch(`${service.base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: created.client_id, client_secret: created.client_secret }),
      }),
      200,
      'token',
    );
    const token = tokenBody.access_token;
    const auth = { authorization: `Bearer ${token}` };
    const attestation = await expectJson<{ id: string }>(
      await fetch(`${service.base}/v1/kyc/attestations`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          subject_id: 'inv-bench-fix',
          level: 'KYC3',
          jurisdictions: ['UEMOA'],
          verifications: ['id_doc', 'selfie', 'address', 'liveness', 'source_of_funds', 'pep'].map((type) => ({
            type,
            verified_at: '2026-11-20T09:00:00Z',
          })),
        }),
      }),
      201,
      'attestation',
    );
    const instrument = await expectJson<{ reference_price_cents: number; tick_size_cents: number; price_band_bps: number | null }>(
      await fetch(`${service.base}/v1/instruments/KOLA.BRVM`),
      200,
      'instrument',
    );
    // The top of the band: a buy there is marketable at the simulated exchange, and the executor fills at the limit.
    const bps = instrument.price_band_bps ?? 0;
    const limit =
      Math.floor((instrument.reference_price_cents * (10_000 + bps)) / 10_000 / instrument.tick_size_cents) * instrument.tick_size_cents;
    const body = (partner: string) =>
      JSON.stringify({
        rcpt_to: partner,
        kyc_attestation_id: attestation.id,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 1,
        limit_price_cents: limit,
      });
    const post = (partner: string) =>
      fetch(`${service.base}/v1/orders`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: body(partner),
      });
    for (const partner of [fixPartner, sandboxPartner]) {
      const first = await expectJson<{ status: string }>(await post(partner), 201, `first order to ${partner}`);
      if (first.status !== 'routed') throw new Error(`the first order to ${partner} is ${first.status}, not routed`);
    }

    // Orders not yet executed (the routing worker applies fills behind the rounds).
    const openReader = new Database(join(dataDir, 'cauri.sqlite'), { readonly: true });
    const openCount = openReader.prepare("select count(*) as n from orders where status in ('pending', 'routed', 'partially_filled')");
    const openOrders = () => (openCount.get() as { n: number }).n;
    // 1. Throughput, alternating rounds.
    const sides = [
      { key: 'fix' as const, partner: fixPartner, probe: new WriterProbe(service.base), runs: [] as Measurement[], drains: [] as number[] },
      {
        key: 'sandbox' as const,
        partner: sandboxPartner,
        probe: new WriterProbe(service.base),
        runs: [] as Measurement[],
        drains: [] as number[],
      },
    ];
    const seconds = Math.max(1, Math.round(settings.duration / settings.rounds));
    // BENCH_FIX_SIDES=fix (or sandbox) loads one side only: for a profile of it (the figures then lack the other).
    const only = process.env.BENCH_FIX_SIDES;
    for (let round = 0; round < settings.rounds; round++) {
      for (const side of sides) {
        if (only !== undefined && only !== '' && only !== side.key) continue;
        const target = {
          url: `${service.base}/v1/orders`,
          requests: [
            {
              method: 'POST' as const,
              path: '/v1/orders',
              headers: { ...auth, 'content-type': 'application/json' },
              body: body(side.partner),
              setupRequest: (request: Record<string, any>) => ({
                ...request,
                headers: { ...request.headers, 'idempotency-key': randomUUID() },
              }),
            },
          ],
        };
        const measured = await measure(
          `FIX scenario / ${side.key} / round ${round + 1}`,
          target,
          { connections: settings.connections, duration: seconds, warmup: round === 0 ? settings.warmup : 0 },
          side.probe,
        );
        side.runs.push(measured);
        const openAtEnd = openOrders();
        // Every order of the round executed before the other side starts: no side's rounds apply the
        // other's fills. The time it takes is reported, not counted in the round's rate.
        const drainStart = performance.now();
        for (let n = openAtEnd; n > 0; n = openOrders()) {
          if (performance.now() - drainStart > 300_000) throw new Error(`${n} orders of a ${side.key} round still open after 300 s`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        side.drains.push((performance.now() - drainStart) / 1000);
        log(
          `  round ${round + 1}, ${side.key}: ${measured.rps.toFixed(0)}/s (p99 ${measured.p99} ms); ${openAtEnd} of its orders open at its end, all executed ${side.drains.at(-1)?.toFixed(1)} s later`,
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    const summary = (side: (typeof sides)[number]): SideResult => {
      const answered = side.runs.reduce((a, m) => a + m.ok, 0);
      return {
        rps: side.runs.reduce((a, m) => a + m.rps, 0) / side.runs.length,
        p50: Math.max(...side.runs.map((m) => m.p50)),
        p99: Math.max(...side.runs.map((m) => m.p99)),
        rounds: side.runs.map((m) => m.rps),
        drains: side.drains,
        executedRps: answered / (side.runs.length * seconds + side.drains.reduce((a, d) => a + d, 0)),
        writerNote: side.probe.note(answered, undefined),
      };
    };

    // 2. Hand-over latency: one order at a time, alternating partners, on an otherwise idle service. The
    // throughput rounds leave thousands of orders whose fills the routing worker is still applying; the probe
    // starts once they are all done, so that it measures a hand-over and not that backlog.
    {
      const backlog = new Database(join(dataDir, 'cauri.sqlite'), { readonly: true });
      const open = backlog.prepare("select count(*) as n from orders where status in ('pending', 'routed', 'partially_filled')");
      const drainedBy = Date.now() + 300_000;
      let last = -1;
      for (;;) {
        const { n } = open.get() as { n: number };
        if (n === 0) break;
        if (Date.now() > drainedBy) throw new Error(`${n} orders of the throughput rounds are still open after 300 s`);
        if (n !== last) log(`  waiting for ${n} open orders of the throughput rounds to be executed`);
        last = n;
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
      backlog.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const pauses = await readPauses(service.base);
    const sent = new Map<string, { partner: 'fix' | 'sandbox'; at: number; roundTrip: number }>();
    for (let i = 0; i < settings.probeOrders; i++) {
      for (const side of sides) {
        const at = performance.timeOrigin + performance.now();
        const res = await post(side.partner);
        const roundTrip = performance.timeOrigin + performance.now() - at;
        const order = await expectJson<{ id: string; status: string }>(res, 201, 'latency probe order');
        if (order.status !== 'routed') throw new Error(`latency probe: an order to ${side.key} is ${order.status}`);
        sent.set(order.id, { partner: side.key, at, roundTrip });
      }
    }
    const probePauses = await pauses();
    const db = new Database(join(dataDir, 'cauri.sqlite'), { readonly: true });
    let events: { subject_ref: string; type: string; created_at: number }[] = [];
    const ids = [...sent.keys()];
    const executedBy = Date.now() + 30_000;
    for (;;) {
      events = [];
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        events.push(
          ...(db
            .prepare(
              `select subject_ref, type, created_at from events where type in ('order.created', 'order.routed', 'order.executed') and subject_ref in (${chunk.map(() => '?').join(',')})`,
            )
            .all(...chunk) as typeof events),
        );
      }
      if (events.filter((e) => e.type === 'order.executed').length >= ids.length || Date.now() > executedBy) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    db.close();
    const byOrder = new Map<string, Record<string, number>>();
    for (const e of events) byOrder.set(e.subject_ref, { ...byOrder.get(e.subject_ref), [e.type]: Number(e.created_at) });
    const figures = (partner: 'fix' | 'sandbox'): LatencyFigures => {
      const mine = [...sent.entries()].filter(([, s]) => s.partner === partner);
      const missing = mine.filter(([id]) => byOrder.get(id)?.['order.executed'] === undefined).length;
      if (missing > 0) throw new Error(`latency probe: ${missing} orders to ${partner} were not executed within 30 s`);
      const of = (type: string) => mine.map(([id, s]) => (byOrder.get(id)?.[type] as number) - s.at);
      return {
        orders: mine.length,
        postToRouted: percentiles(of('order.routed')),
        postToExecuted: percentiles(of('order.executed')),
        createdToRouted: percentiles(
          mine.map(([id]) => (byOrder.get(id)?.['order.routed'] as number) - (byOrder.get(id)?.['order.created'] as number)),
        ),
        roundTrip: percentiles(mine.map(([, s]) => s.roundTrip)),
      };
    };
    const metrics = await (await fetch(`${service.base}/metrics`)).text();
    const count = (direction: string) =>
      metrics
        .split('\n')
        .filter((l) => l.startsWith('cauri_fix_messages_total{') && l.includes(`direction="${direction}"`))
        .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const result: FixBenchResult = {
      fix: summary(sides[0] as (typeof sides)[number]),
      sandbox: summary(sides[1] as (typeof sides)[number]),
      latency: { fix: figures('fix'), sandbox: figures('sandbox') },
      fixMessages: { sent: count('sent'), received: count('received') },
      probePauses,
    };
    writeFileSync(output, JSON.stringify(result, null, 2));
    log(`figures written to ${output}`);
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await executor.stop();
    killAllChildren();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`[bench:fix] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAllChildren();
    process.exit(1);
  },
);
