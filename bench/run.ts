/**
 * The benchmark harness (`npm run bench`). Starts the service, a bare Fastify reference server and
 * an oidc-provider peer, each in its own process; loads each scenario and then its references back
 * to back with autocannon (scenario-run.ts; the FIX scenario in fix-scenario.ts); writes
 * docs/benchmarks.md. Exits 1 if a scenario fails (a non-2xx answer, a connection error, a timeout),
 * not when a goal is missed. See docs/benchmarks.md, "How to run".
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killAllChildren, runNode, spawnServer, type ServerProcess } from './processes.js';
import { renderReport, type ScenarioFailure, type ScenarioResult, type Settings } from './report.js';
import { FIX_SCENARIO, KYC1_REQUEST, REFERENCES, SCENARIOS, type BenchContext } from './scenarios.js';
import { pgWireCensus } from './wire-census.js';
import { exchangeToken, orderFixture, startPostgresService, startScaledOut } from './orders.js';
import { positionsFixture } from './positions.js';
import { NotRunnable, runFixScenario } from './fix-scenario.js';
import { log, runScenario } from './scenario-run.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/cauri.cjs');
const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const OIDC_PEER = fileURLToPath(new URL('./oidc-peer.js', import.meta.url));
const RATE_LIMIT = '10000000';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return Number(raw);
}

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
    // Each fixture is prepared right before the first scenario that uses it, so that the processes
    // and the data it adds (10,000 fills, a PostgreSQL deployment, four more processes) are not there
    // while the scenarios before it are measured; a partial run prepares only those it needs.
    const ctx: BenchContext = {
      service: service.base,
      bare: bare.base,
      peer: peer.base,
      client: { id: created.client_id, secret: created.client_secret },
      token,
      attestation,
      keyDocument,
      orders: { sqlite: sqliteOrders, postgres: null },
      positions: { service: service.base, token, subject: '' },
      scaled: null,
      pids: { [service.base]: service.pid, [bare.base]: bare.pid },
    };
    const drops: (() => Promise<void>)[] = [];
    let pgService: { drop: () => Promise<void> } | null = null;
    const prepare = async (name: string) => {
      if (name === 'positions read' && ctx.positions.subject === '') {
        log('positions fixture: a subject with 10,000 fills');
        ctx.positions = await positionsFixture(service.base, token, log);
      }
      if (name === 'order submission (PostgreSQL)' && ctx.orders.postgres === null) {
        const postgres = await startPostgresService(serviceEnv, dataDir, servers, CLI, profiling);
        if (postgres !== null) drops.push(postgres.drop);
        pgService = postgres;
        ctx.orders.postgres = postgres?.orders ?? null;
        if (postgres !== null) ctx.pids[postgres.orders.service] = postgres.pid;
      }
      if (name === 'order submission (scaled out)' && ctx.scaled === null) {
        ctx.scaled = await startScaledOut(serviceEnv, dataDir, servers, CLI);
        if (ctx.scaled !== null) drops.push(ctx.scaled.drop);
      }
    };

    // The PostgreSQL deployments are each used by one scenario: once it is measured their processes
    // stop, so that their background loops take no CPU from the scenarios after it.
    const release = async (name: string) => {
      if (name === 'order submission (PostgreSQL)') await pgService?.drop();
      if (name === 'order submission (scaled out)') await ctx.scaled?.drop();
    };
    const results: ScenarioResult[] = [];
    const failures: ScenarioFailure[] = [];
    for (const scenario of scenarios) {
      await prepare(scenario.name);
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
        await release(scenario.name);
        if (scenario.name === 'order submission (PostgreSQL)') {
          log('  wire census: orders one at a time through a relay that reads the PostgreSQL protocol');
          const census = await pgWireCensus(serviceEnv, dataDir, servers, CLI).catch(
            (error: unknown) => `The wire census failed: ${error instanceof Error ? error.message : String(error)}.`,
          );
          if (census !== null) result.note = result.note === undefined ? census : `${census}\n\n${result.note}`;
        }
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
    for (const drop of drops) await drop();
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

process.on('exit', () => killAllChildren());
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
