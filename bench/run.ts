/**
 * The benchmark harness (`npm run bench`). Starts the service, a bare Fastify reference server and
 * an oidc-provider peer, each in its own process; loads each scenario and then its references back
 * to back with autocannon; writes docs/benchmarks.md. Exits 1 if a scenario fails (a non-2xx answer,
 * a connection error, a timeout), not when a goal is missed. See docs/benchmarks.md, "How to run".
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measurePaced } from './paced.js';
import { measure, measureSplit, type Measurement } from './load.js';
import { CpuProbe } from './cpu.js';
import { freePort, killAllChildren, runNode, spawnServer, type ServerProcess } from './processes.js';
import { renderReport, type Row, type ScenarioFailure, type ScenarioResult, type Settings } from './report.js';
import type { FixBenchResult, LatencyFigures } from './fix.js';
import { FIX_SCENARIO, KYC1_REQUEST, REFERENCES, SCENARIOS, isRatioGoal, type BenchContext, type Scenario } from './scenarios.js';
import { exchangeToken, orderFixture, startPostgresService, startScaledOut } from './orders.js';
import { positionsFixture } from './positions.js';
import { WriterProbe } from './writer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/cauri.cjs');
const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const OIDC_PEER = fileURLToPath(new URL('./oidc-peer.js', import.meta.url));
const FIX_BENCH = fileURLToPath(new URL('./fix.js', import.meta.url));
const RATE_LIMIT = '10000000';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return Number(raw);
}

const log = (message: string) => process.stdout.write(`[bench] ${message}\n`);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function json<T>(res: Response, expected: number, what: string): Promise<T> {
  const text = await res.text();
  if (res.status !== expected) throw new Error(`${what}: expected ${expected}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function main(): Promise<number> {
  const settings = {
    connections: positiveInteger('BENCH_CONNECTIONS', 50),
    duration: positiveInteger('BENCH_DURATION', 10),
    warmup: Number(process.env.BENCH_WARMUP ?? '2'),
    rounds: positiveInteger('BENCH_ROUNDS', 5),
  };
  if (!(settings.warmup >= 0)) throw new Error('BENCH_WARMUP must be a number of seconds >= 0');
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const names = [...SCENARIOS.map((s) => s.name), FIX_SCENARIO.name];
  const unknown = only.filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown scenario ${unknown.join(', ')}; scenarios: ${names.join(', ')}`);
  const scenarios = only.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => only.includes(s.name));
  const runFix = only.length === 0 || only.includes(FIX_SCENARIO.name);
  // A partial run does not overwrite the published figures unless asked to.
  const output = resolve(
    process.env.BENCH_OUTPUT ?? (only.length === 0 ? join(ROOT, 'docs/benchmarks.md') : join(tmpdir(), 'cauri-benchmarks.md')),
  );
  const cpuProfDir =
    process.env.BENCH_CPU_PROF === undefined || process.env.BENCH_CPU_PROF === '' ? null : resolve(process.env.BENCH_CPU_PROF);

  const started = new Date();
  const loadAtStart = loadavg();
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-bench-'));
  const servers: ServerProcess[] = [];
  const onSignal = (signal: NodeJS.Signals) => {
    killAllChildren();
    rmSync(dataDir, { recursive: true, force: true });
    process.stderr.write(`[bench] interrupted by ${signal}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const serviceEnv: Record<string, string> = {
      CAURI_MODE: 'sandbox',
      CAURI_DATA_DIR: dataDir,
      CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
      CAURI_SQLITE_SYNCHRONOUS: 'FULL',
      // The same work at any hour of the run: the simulated exchange executes whatever its calendar says.
      CAURI_SANDBOX_MARKET_HOURS: 'always',
      // The largest value the configuration accepts (10 million a minute): counted, never reached in a run.
      CAURI_RATE_LIMIT_SANDBOX: RATE_LIMIT,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      // Whatever the caller's shell holds, the service under test is the embedded single process.
      DATABASE_URL: '',
      REDIS_URL: '',
      CAURI_PUBLIC_URL: '',
    };

    log(`data folder ${dataDir}; creating the bench client`);
    const created = JSON.parse(
      await runNode(CLI, ['clients', 'create', '--name', 'bench', '--json'], { ...serviceEnv, LOG_LEVEL: 'silent' }, dataDir),
    ) as {
      client_id: string;
      client_secret: string;
    };

    const port = await freePort();
    if (cpuProfDir !== null) mkdirSync(cpuProfDir, { recursive: true });
    const profiling = cpuProfDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
    const service = await spawnServer({
      name: 'cauri serve',
      script: CLI,
      args: ['serve'],
      env: { ...serviceEnv, PORT: String(port) },
      cwd: dataDir,
      nodeArgs: profiling,
      ready: { kind: 'poll', base: `http://127.0.0.1:${port}`, path: '/readyz' },
    });
    servers.push(service);
    log(`service at ${service.base} (pid ${service.pid})`);

    const partnersPage = await fetch(`${service.base}/v1/sgi/partners`);
    const partnersBytes = (await partnersPage.arrayBuffer()).byteLength;
    if (partnersPage.status !== 200) throw new Error(`GET /v1/sgi/partners answered ${partnersPage.status}`);

    const bare = await spawnServer({
      name: 'bare Fastify',
      script: BARE_SERVER,
      // The floors' database beside the service's, and the thread pool sized as the `cauri` command sizes it.
      env: {
        BARE_JSON_BYTES: String(partnersBytes),
        PORT: '0',
        BARE_SQLITE_PATH: join(dataDir, 'bare-floor.db'),
        BARE_DATABASE_URL: process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? '',
        UV_THREADPOOL_SIZE: String(Math.max(2, availableParallelism())),
      },
      ready: { kind: 'address-line' },
    });
    servers.push(bare);
    const peer = await spawnServer({
      name: 'oidc-provider peer',
      script: OIDC_PEER,
      env: { PORT: '0', DEBUG: '' },
      ready: { kind: 'address-line' },
    });
    servers.push(peer);
    log(`bare Fastify at ${bare.base} (pid ${bare.pid}), oidc-provider peer at ${peer.base} (pid ${peer.pid})`);

    // Fixtures: a token, an attestation issued through the API, the key document.
    const token = await exchangeToken(service.base, created.client_id, created.client_secret);
    const issued = await json<{ id: string }>(
      await fetch(`${service.base}/v1/kyc/attestations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(KYC1_REQUEST),
      }),
      201,
      'attestation issuance',
    );
    const attestation = await json<Record<string, unknown> & { id: string }>(
      await fetch(`${service.base}/v1/kyc/attestations/${issued.id}`, { headers: { authorization: `Bearer ${token}` } }),
      200,
      'attestation read',
    );
    const keyDocument = await json<BenchContext['keyDocument']>(await fetch(`${service.base}/.well-known/cauri`), 200, 'key document');
    const bareBytes = (await (await fetch(`${bare.base}/bare/json`)).arrayBuffer()).byteLength;

    const sqliteOrders = await orderFixture(service.base, token);
    const wanted = (name: string) => scenarios.some((s) => s.name === name);
    // The fixtures of scenarios left out of a partial run are not prepared (10,000 fills take minutes).
    let positions: BenchContext['positions'] = { service: service.base, token, subject: '' };
    if (wanted('positions read')) {
      log('positions fixture: a subject with 10,000 fills');
      positions = await positionsFixture(service.base, token, log);
    }
    const postgres = wanted('order submission (PostgreSQL)')
      ? await startPostgresService(serviceEnv, dataDir, servers, CLI, profiling)
      : null;
    const scaled = wanted('order submission (scaled out)') ? await startScaledOut(serviceEnv, dataDir, servers, CLI) : null;
    const ctx: BenchContext = {
      service: service.base,
      bare: bare.base,
      peer: peer.base,
      client: { id: created.client_id, secret: created.client_secret },
      token,
      attestation,
      keyDocument,
      orders: { sqlite: sqliteOrders, postgres: postgres?.orders ?? null },
      positions,
      scaled,
    };

    const results: ScenarioResult[] = [];
    const failures: ScenarioFailure[] = [];
    for (const scenario of scenarios) {
      if (scenario.kind === 'http' && scenario.available !== undefined && !scenario.available(ctx)) {
        log(`scenario "${scenario.name}" skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server`);
        failures.push({
          name: scenario.name,
          description: scenario.description,
          error:
            'not measured: no PostgreSQL server (BENCH_DATABASE_URL) or, for the scaled-out scenario, no Redis (BENCH_REDIS_URL) configured',
          skipped: true,
        });
        continue;
      }
      log(`scenario "${scenario.name}"`);
      try {
        const result = await runScenario(scenario, ctx, settings);
        results.push(result);
        log(
          `  ours ${result.ours.rps.toFixed(0)}/s; ` +
            result.references.map((r) => `${r.key} ${r.row.rps.toFixed(0)}/s (ratio ${r.ratio.toFixed(2)})`).join('; ') +
            (result.goal === undefined ? '' : `; goal ${result.goal.met ? 'met' : 'NOT met'}`),
        );
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        failures.push({ name: scenario.name, description: scenario.description, error: message });
        process.stderr.write(`[bench] SCENARIO FAILED: ${scenario.name}: ${message}\n`);
      }
    }

    if (runFix) {
      log(`scenario "${FIX_SCENARIO.name}" (in a loopback-only network namespace)`);
      try {
        results.push(await runFixScenario(settings, cpuProfDir, dataDir));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const skipped = error instanceof NotRunnable;
        failures.push({
          name: FIX_SCENARIO.name,
          description: FIX_SCENARIO.description,
          error: message,
          ...(skipped ? { skipped: true } : {}),
        });
        process.stderr.write(`[bench] SCENARIO ${skipped ? 'NOT RUN' : 'FAILED'}: ${FIX_SCENARIO.name}: ${message}\n`);
      }
    }

    const loadAtEnd = loadavg();
    const report = renderReport({
      root: ROOT,
      started,
      finished: new Date(),
      settings: { ...settings, synchronous: 'FULL', logLevel: 'warn', rateLimit: RATE_LIMIT } satisfies Settings,
      results,
      failures,
      referenceLabels: {
        ...Object.fromEntries(Object.entries(REFERENCES).map(([k, v]) => [k, v.short])),
        'raw-ed25519': 'raw Ed25519',
        'sandbox-connector': 'sandbox connector',
      },
      notes: [
        `Load average of the machine (1, 5, 15 minutes; ${availableParallelism()} cores): ${loadAtStart.map((l) => l.toFixed(1)).join(', ')} at the start, ${loadAtEnd.map((l) => l.toFixed(1)).join(', ')} at the end. Other work on the machine slows every side; the ratios are measured back to back, the absolute figures and latencies are not comparable across runs.`,
        `The partners page (\`GET /v1/sgi/partners\`, default page) was ${partnersBytes} bytes; \`GET /bare/json\` was ${bareBytes} bytes.`,
        ...(only.length === 0 ? [] : [`Partial run: only ${only.join(', ')}.`]),
        'Two more reports come from their own scripts: [benchmarks-snapshot.md](benchmarks-snapshot.md) (`npm run bench:snapshot`, the daily snapshot of 1,000,000 orders) and [benchmarks-webhooks.md](benchmarks-webhooks.md) (`npm run bench:webhooks`, webhook deliveries).',
      ],
    });
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, report);
    log(`report written to ${output}`);
    await postgres?.drop();
    await scaled?.drop();
    if (failures.some((f) => f.skipped !== true)) {
      process.stderr.write(`[bench] ${failures.length} scenario(s) failed: ${failures.map((f) => f.name).join(', ')}\n`);
      return 1;
    }
    return 0;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    killAllChildren();
    rmSync(dataDir, { recursive: true, force: true });
    if (cpuProfDir !== null) log(`CPU profile of the service in ${cpuProfDir} (summarise: node dist/bench/profile-summary.js <file>)`);
  }
}

async function runScenario(
  scenario: Scenario,
  ctx: BenchContext,
  settings: { connections: number; duration: number; warmup: number; rounds: number },
): Promise<ScenarioResult> {
  if (scenario.kind === 'in-process') {
    const { ours, reference } = scenario.run(ctx, { durationSeconds: settings.duration });
    const ratio = ours.rps / reference.rps;
    return {
      name: scenario.name,
      description: scenario.description,
      ours: { label: 'cauri', rps: ours.rps, p50: null, p99: null, microsPerOp: ours.microsPerOp },
      references: [
        {
          key: 'raw-ed25519',
          row: { label: scenario.referenceLabel, rps: reference.rps, p50: null, p99: null, microsPerOp: reference.microsPerOp },
          ratio,
        },
      ],
      ...(scenario.goal === undefined
        ? {}
        : { goal: { ...scenario.goal, label: scenario.referenceLabel, actual: ratio, met: ratio >= scenario.goal.ratio } }),
      note:
        `The two sides alternated in 100 ms slices; each rate is a side's verifications over its own time. ` +
        `Verifications per second per quarter of the run: ours ${ours.quarters.map((r) => Math.round(r)).join(', ')}; ` +
        `raw ${reference.quarters.map((r) => Math.round(r)).join(', ')}.`,
    };
  }
  // Ours and each reference in turn, `rounds` times (each run duration / rounds seconds, the warm-up
  // only before the first), so that drift of a noisy machine hits every side alike.
  const sides = [
    { key: 'ours', label: 'cauri', target: scenario.target(ctx), split: scenario.targets?.(ctx) },
    ...scenario.references.map((key) => ({ key, label: REFERENCES[key].label, target: REFERENCES[key].target(ctx), split: undefined })),
  ];
  const cpuGroups = scenario.cpu?.(ctx);
  const cpu = new Map(sides.map((side) => [side.key, cpuGroups === undefined ? undefined : new CpuProbe(cpuGroups)]));
  const runs = new Map<string, Measurement[]>(sides.map((s) => [s.key, []]));
  const duration = Math.max(1, Math.round(settings.duration / settings.rounds));
  const writer = scenario.writer === undefined ? undefined : new WriterProbe(scenario.writer(ctx));
  for (let round = 0; round < settings.rounds; round++) {
    for (const side of sides) {
      const label = `${scenario.name} / ${side.key} / round ${round + 1}`;
      const sideProbe = side.key === 'ours' && writer !== undefined ? writer : cpu.get(side.key);
      const load = { connections: scenario.connections ?? settings.connections, duration, warmup: round === 0 ? settings.warmup : 0 };
      const measured =
        side.split === undefined
          ? await measure(label, side.target, load, sideProbe)
          : await measureSplit(label, side.split, load, sideProbe);
      log(`    round ${round + 1}, ${side.key}: ${measured.rps.toFixed(0)}/s`);
      runs.get(side.key)?.push(measured);
      await pause(500);
    }
  }
  const combine = (label: string, list: Measurement[]): Row => ({
    label,
    rps: list.reduce((a, m) => a + m.rps, 0) / list.length,
    p50: Math.max(...list.map((m) => m.p50)),
    p99: Math.max(...list.map((m) => m.p99)),
  });
  const ours = combine('cauri', runs.get('ours') ?? []);
  // A latency goal read at a fraction of the maximum: one more run of ours, held at that rate.
  let held: { rate: number; measured: Measurement } | undefined;
  if (scenario.goal !== undefined && !isRatioGoal(scenario.goal) && scenario.goal.atFractionOfMax !== undefined) {
    const rate = ours.rps * scenario.goal.atFractionOfMax;
    await pause(500);
    const measured = await measurePaced(`${scenario.name} / ours at ${Math.round(rate)}/s`, sides[0]!.target, {
      connections: scenario.connections ?? settings.connections,
      duration: settings.duration,
      rate,
    });
    log(`    ours held at ${rate.toFixed(0)}/s: ${measured.rps.toFixed(0)}/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms`);
    held = { rate, measured };
  }
  const references: ScenarioResult['references'] = sides.slice(1).map((side) => {
    const row = combine(side.label, runs.get(side.key) ?? []);
    return { key: side.key, row, ratio: ours.rps / row.rps };
  });
  const ratioGoal = scenario.goal !== undefined && isRatioGoal(scenario.goal) ? scenario.goal : undefined;
  const goalRef = ratioGoal === undefined ? undefined : references.find((r) => r.key === ratioGoal.of);
  const answered = (runs.get('ours') ?? []).reduce((a, m) => a + m.ok, 0);
  const heldNote =
    held === undefined
      ? undefined
      : `Latency goal read at ${Math.round((held.rate / ours.rps) * 100)} % of the measured maximum: ours sent ${Math.round(held.rate).toLocaleString('en-US')} requests a second, evenly spaced, ` +
        `for ${settings.duration} s over at most ${scenario.connections ?? settings.connections} connections (latency counted from each request's due time) answered ${Math.round(held.measured.rps).toLocaleString('en-US')} a second, ` +
        `p50 ${held.measured.p50} ms, p99 ${held.measured.p99} ms. At the maximum rate the p99 (${ours.p99} ms, the worst round's) is mostly time spent queueing behind the other connections.`;
  const cpuNote =
    cpuGroups === undefined
      ? undefined
      : 'Cores kept busy on average during the measured runs (2.00 would be both cores of this machine all the time; PostgreSQL and Redis count every process of that name on the machine): ' +
        sides
          .map(
            (side) =>
              `${side.key === 'ours' ? 'two API processes and a worker' : REFERENCES[side.key as keyof typeof REFERENCES].short}: ${cpu.get(side.key)?.summary() ?? ''}`,
          )
          .join('; ') +
        '.';
  const writerNote =
    writer === undefined
      ? cpuNote
      : writer.note(
          answered,
          ratioGoal === undefined || goalRef === undefined
            ? undefined
            : {
                ratio: ratioGoal.ratio,
                referenceRps: goalRef.row.rps,
                referenceLabel: REFERENCES[goalRef.key as keyof typeof REFERENCES].short,
              },
        );
  const goal: ScenarioResult['goal'] =
    scenario.goal === undefined
      ? undefined
      : isRatioGoal(scenario.goal)
        ? goalRef === undefined
          ? undefined
          : { ...scenario.goal, label: goalRef.row.label, actual: goalRef.ratio, met: goalRef.ratio >= scenario.goal.ratio }
        : (() => {
            const p99 = held?.measured.p99 ?? ours.p99 ?? Number.POSITIVE_INFINITY;
            return { ...scenario.goal, label: 'p99', actual: p99, met: p99 <= scenario.goal.p99Ms };
          })();
  const note = [writerNote, heldNote].filter((n) => n !== undefined).join('\n\n') || undefined;
  return {
    name: scenario.name,
    description: scenario.description,
    ours,
    references,
    ...(scenario.connections === undefined ? {} : { connections: scenario.connections }),
    ...(note === undefined ? {} : { note }),
    ...(goal === undefined ? {} : { goal }),
  };
}

/** The scenario cannot run here (no root for the network namespace, or no QuickFIX): reported, not failed. */
class NotRunnable extends Error {}

const fmt = (ms: number) => (ms >= 100 ? `${Math.round(ms)} ms` : `${ms.toFixed(1)} ms`);

function latencyRow(label: string, f: LatencyFigures): string {
  return `| ${label} | ${f.orders} | ${fmt(f.postToRouted.p50)} / ${fmt(f.postToRouted.p99)} | ${fmt(f.createdToRouted.p50)} / ${fmt(f.createdToRouted.p99)} | ${fmt(f.roundTrip.p50)} / ${fmt(f.roundTrip.p99)} | ${fmt(f.postToExecuted.p50)} / ${fmt(f.postToExecuted.p99)} |`;
}

/**
 * Runs bench/fix.ts inside a new network namespace whose one interface is loopback (`unshare -n`, as
 * the FIX tests do) and turns its figures into the report's scenario.
 */
async function runFixScenario(
  settings: { connections: number; duration: number; warmup: number; rounds: number },
  cpuProfDir: string | null,
  dataDir: string,
): Promise<ScenarioResult> {
  if (process.getuid?.() !== 0)
    throw new NotRunnable(
      "not measured: it needs root, for a network namespace that has only loopback (unshare -n), where QuickFIX's executor may listen",
    );
  const output = join(dataDir, 'fix-figures.json');
  const env = {
    ...process.env,
    BENCH_FIX_OUTPUT: output,
    BENCH_CONNECTIONS: String(settings.connections),
    BENCH_DURATION: String(settings.duration),
    BENCH_ROUNDS: String(settings.rounds),
    BENCH_WARMUP: String(settings.warmup),
    ...(cpuProfDir === null ? {} : { BENCH_CPU_PROF: cpuProfDir }),
  };
  const child = spawn(
    'unshare',
    ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, '--enable-source-maps', FIX_BENCH],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      errors += String(error);
      resolve(null);
    });
    child.on('close', resolve);
  });
  if (code !== 0) {
    if (/quickfix|libquickfix/i.test(errors) && /missing/.test(errors)) throw new NotRunnable(`not measured: ${errors.trim()}`);
    throw new Error(`bench/fix.ts exited with ${code}:\n${errors.trim()}`);
  }
  const figures = JSON.parse(readFileSync(output, 'utf8')) as FixBenchResult;
  const ratio = figures.fix.rps / figures.sandbox.rps;
  const handOver = figures.latency.fix.postToRouted.p99;
  const lf = figures.latency;
  return {
    name: FIX_SCENARIO.name,
    description: FIX_SCENARIO.description,
    ours: { label: 'cauri, FIX connector', rps: figures.fix.rps, p50: figures.fix.p50, p99: figures.fix.p99 },
    references: [
      {
        key: 'sandbox-connector',
        row: {
          label: 'cauri, sandbox connector (the same order to the simulated SGI, same service)',
          rps: figures.sandbox.rps,
          p50: figures.sandbox.p50,
          p99: figures.sandbox.p99,
        },
        ratio,
      },
    ],
    goal: { ...FIX_SCENARIO.goal, label: 'sandbox connector', actual: ratio, met: ratio >= FIX_SCENARIO.goal.ratio },
    otherGoals: [
      {
        goal: `p99 hand-over (POST sent to \`order.routed\`) under ${FIX_SCENARIO.handOverP99Ms} ms on loopback`,
        measured: fmt(handOver),
        met: handOver < FIX_SCENARIO.handOverP99Ms,
      },
    ],
    note: [
      `Rounds (req/s): FIX ${figures.fix.rounds.map((r) => Math.round(r)).join(', ')}; sandbox ${figures.sandbox.rounds.map((r) => Math.round(r)).join(', ')}. The FIX session carried ${figures.fixMessages.sent.toLocaleString('en-US')} messages out and ${figures.fixMessages.received.toLocaleString('en-US')} in over the run.`,
      '',
      `Hand-over, one order at a time on the otherwise idle service, ${lf.fix.orders} orders to each partner, alternating (p50 / p99; from the moment the POST is sent to the order's event's \`created_at\`, same machine clock, 1 ms resolution; \`order.created\` to \`order.routed\` is inside the service; the round trip is the POST's answer, which comes once the partner acknowledged the order):`,
      '',
      '| Connector | Orders | POST to `order.routed` | `order.created` to `order.routed` | POST round trip | POST to `order.executed` |',
      '|---|---:|---:|---:|---:|---:|',
      latencyRow('FIX', lf.fix),
      latencyRow('sandbox', lf.sandbox),
      '',
      `\`order.executed\` comes from the routing worker, which reads the partners' report logs every 250 ms, and, for the sandbox, from its simulated market; the hand-over is what the goal bounds.`,
      '',
      `FIX, under load: ${figures.fix.writerNote}`,
      '',
      `Sandbox, under load: ${figures.sandbox.writerNote}`,
    ].join('\n'),
  };
}

process.on('exit', () => killAllChildren());
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
