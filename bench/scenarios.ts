import { randomUUID } from 'node:crypto';
import { PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_SCOPE } from './constants.js';
import type { LoadTarget } from './load.js';
import { measureOfflineVerification, type LoopMeasurement } from './offline.js';
import { POSITIONS_FILLS, type PositionsTarget } from './positions.js';
import type { OrderTarget, ScaledOutFixture } from './orders.js';
import type { CpuGroup } from './cpu.js';

/** What the scenarios may use: the servers' base URLs and the fixtures prepared before any load. */
export interface BenchContext {
  /** The real service (`cauri serve`). */
  service: string;
  /** The bare Fastify reference server. */
  bare: string;
  /** The oidc-provider peer. */
  peer: string;
  client: { id: string; secret: string };
  /** A valid access token of `client` (all scopes; valid 15 minutes, longer than a run). */
  token: string;
  /** An attestation issued before the run, exactly as the service returns it. */
  attestation: Record<string, unknown> & { id: string };
  /** The issuer key document (`/.well-known/cauri`). */
  keyDocument: { keys: { key_id: string; public_key: string }[] };
  /** Order submission fixtures: the embedded service, and a second one on PostgreSQL when available. */
  orders: { sqlite: OrderTarget; postgres: OrderTarget | null };
  /** A subject of the embedded service with POSITIONS_FILLS fills applied. */
  positions: PositionsTarget;
  /** One process, and two API processes with a worker process, on PostgreSQL and Redis, when both are configured. */
  scaled: ScaledOutFixture | null;
  /** The process answering at each origin the harness started (for the latency reads' pinning). */
  pids: Record<string, number>;
}

export function orderTarget(target: OrderTarget): LoadTarget {
  return {
    url: `${target.service}/v1/orders`,
    requests: [
      {
        method: 'POST',
        path: '/v1/orders',
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        body: target.body,
        setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }),
      },
    ],
  };
}

/** The reference servers a scenario is compared against; each is loaded right after the scenario. */
export type ReferenceName =
  | 'bare-json'
  | 'bare-post'
  | 'bare-durable'
  | 'bare-signed-durable'
  | 'bare-pg-order'
  | 'bare-pg-commits'
  | 'sqlite-orders'
  | 'oidc-peer-token'
  | 'one-process-orders';

/** A bare POST of the KYC1 body to one of the bare server's routes. */
function barePost(ctx: BenchContext, path: string): LoadTarget {
  return { url: `${ctx.bare}${path}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(KYC1_REQUEST) };
}

export const REFERENCES: Record<ReferenceName, { label: string; short: string; target: (ctx: BenchContext) => LoadTarget }> = {
  'bare-json': {
    label: 'bare Fastify `GET /bare/json`',
    short: 'bare GET',
    target: (ctx) => ({ url: `${ctx.bare}/bare/json` }),
  },
  'bare-post': {
    label: 'bare Fastify `POST /bare/validated`',
    short: 'bare POST',
    target: (ctx) => barePost(ctx, '/bare/validated'),
  },
  'bare-durable': {
    label: 'floor: bare `POST /bare/durable` (the same, answered after one durable SQLite insert, writes of a turn committed together)',
    short: 'durable floor',
    target: (ctx) => barePost(ctx, '/bare/durable'),
  },
  'bare-signed-durable': {
    label: 'floor: bare `POST /bare/signed-durable` (the same, Ed25519-signed over RFC 8785 on the thread pool before the insert)',
    short: 'signed durable floor',
    target: (ctx) => barePost(ctx, '/bare/signed-durable'),
  },
  'bare-pg-order': {
    label:
      'floor: bare `POST /bare/pg-order` (the same body, then on PostgreSQL one transaction inserting the order and its event, one recording the hand-over; pool of 10)',
    short: 'PostgreSQL order floor',
    target: (ctx) => barePost(ctx, '/bare/pg-order'),
  },
  'bare-pg-commits': {
    label:
      'bare `POST /bare/pg-order-commits` (the PostgreSQL floor with the commits the service makes per sandbox order: order, journaled call, routed answer, then the fill after the answer; one statement each; pool of 10)',
    short: 'same commits floor',
    target: (ctx) => barePost(ctx, '/bare/pg-order-commits'),
  },
  'sqlite-orders': {
    label: 'cauri `POST /v1/orders` on SQLite (the same order, the embedded service, in the same run)',
    short: 'SQLite orders',
    target: (ctx) => orderTarget(ctx.orders.sqlite),
  },
  'one-process-orders': {
    label: 'one process: `cauri serve --role all` on PostgreSQL and Redis, every connection to it',
    short: 'one process',
    target: (ctx) => orderTarget((ctx.scaled as ScaledOutFixture).single),
  },
  'oidc-peer-token': {
    label: 'oidc-provider `POST /token` (client credentials, Basic auth, form body)',
    short: 'oidc-provider',
    target: (ctx) => ({
      url: `${ctx.peer}/token`,
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(PEER_CLIENT_ID)}:${encodeURIComponent(PEER_CLIENT_SECRET)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: PEER_SCOPE }).toString(),
    }),
  },
};

/** Ours divided by the reference's throughput must be at least `ratio`. */
export interface RatioGoal {
  ratio: number;
  of: ReferenceName | 'raw-ed25519' | 'sandbox-connector';
}

/**
 * Our p99 latency must be at most `p99Ms`: the worst throughput round's, or, with `atFractionOfMax`, the
 * p99 of one more run of ours held at that fraction of the rate the throughput rounds measured (a
 * latency read at saturation is mostly time spent queueing behind the other connections).
 */
export interface LatencyGoal {
  p99Ms: number;
  atFractionOfMax?: number;
}

export type Goal = RatioGoal | LatencyGoal;

export function isRatioGoal(goal: Goal): goal is RatioGoal {
  return 'ratio' in goal;
}

/** A scenario loaded over HTTP with autocannon: our endpoint, then each reference, back to back. */
export interface HttpScenario {
  kind: 'http';
  name: string;
  /** What the endpoint does, for the report. */
  description: string;
  target: (ctx: BenchContext) => LoadTarget;
  /** The first reference is the main one; the ratio to each is reported. */
  references: readonly ReferenceName[];
  goal?: Goal;
  /**
   * The service whose SQLite writer does this scenario's writes: its /metrics are read around each of
   * our measured runs, and the report gives the writer's time and the process's CPU per request.
   */
  writer?: (ctx: BenchContext) => string;
  /** False when the run lacks what the scenario needs (it is then reported as not measured). */
  available?: (ctx: BenchContext) => boolean;
  /** Concurrent connections for this scenario, when not the run's (BENCH_CONNECTIONS). */
  connections?: number;
  /**
   * A latency goal read at a fraction of the maximum beside a ratio `goal` (reported as a goal of its
   * own); `freshUuidHeader` names the header the paced run gives a new UUID per request.
   */
  latencyGoal?: Required<LatencyGoal> & { freshUuidHeader?: string };
  /** Ours spread over several processes (the connections shared out evenly), instead of `target`. */
  targets?: (ctx: BenchContext) => LoadTarget[];
  /** Processes whose CPU is measured around every measured run (ours and the references), reported per side. */
  cpu?: (ctx: BenchContext) => Record<string, CpuGroup>;
  /** A service on PostgreSQL whose database traffic during ours's measured runs is reported, per request. */
  wire?: (ctx: BenchContext) => string;
  /** What ours is called in the CPU note (`cauri` unless set). */
  cpuLabel?: string;
}

/** A scenario measured inside this process (no HTTP): ours and a reference, in alternating rounds. */
export interface InProcessScenario {
  kind: 'in-process';
  name: string;
  description: string;
  referenceLabel: string;
  run: (ctx: BenchContext, settings: { durationSeconds: number }) => { ours: LoopMeasurement; reference: LoopMeasurement };
  goal?: RatioGoal;
}

export type Scenario = HttpScenario | InProcessScenario;

/** A valid KYC1 request (KYC1 requires an identity document and a selfie). */
export const KYC1_REQUEST = {
  subject_id: 'inv-bench-0001',
  level: 'KYC1',
  jurisdictions: ['UEMOA'],
  verifications: [
    { type: 'id_doc', verified_at: '2026-11-20T09:00:00Z', method: 'ocr' },
    { type: 'selfie', verified_at: '2026-11-20T09:01:00Z' },
  ],
};

/**
 * The scenarios, in run order. A new one (orders, webhook deliveries, snapshots...) is one more
 * entry here; if it needs a fixture, add it to BenchContext and prepare it in run.ts.
 */
export const SCENARIOS: readonly Scenario[] = [
  {
    kind: 'http',
    name: 'partners page',
    description: '`GET /v1/sgi/partners` (public, default page): rate limit per address, SQLite read, signed cursor, JSON',
    target: (ctx) => ({ url: `${ctx.service}/v1/sgi/partners` }),
    references: ['bare-json'],
  },
  {
    kind: 'http',
    name: 'token exchange',
    description: '`POST /v1/auth/token` (client credentials in a JSON body): client lookup and secret check, Ed25519-signed JWT',
    target: (ctx) => ({
      url: `${ctx.service}/v1/auth/token`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: ctx.client.id, client_secret: ctx.client.secret }),
    }),
    references: ['oidc-peer-token', 'bare-post'],
    goal: { ratio: 2, of: 'oidc-peer-token' },
  },
  {
    kind: 'http',
    name: 'authenticated read',
    description:
      '`GET /v1/kyc/attestations/{id}` with a bearer token: token check, client status check, rate limit, the signed document (from SQLite on its first read, then from memory), JSON',
    target: (ctx) => ({
      url: `${ctx.service}/v1/kyc/attestations/${ctx.attestation.id}`,
      headers: { authorization: `Bearer ${ctx.token}` },
    }),
    references: ['bare-json'],
    goal: { ratio: 0.7, of: 'bare-json' },
  },
  {
    kind: 'http',
    name: 'attestation issuance',
    description:
      '`POST /v1/kyc/attestations` (KYC1, fresh Idempotency-Key each): validation, idempotency record, Ed25519 signature, SQLite write with synchronous=FULL',
    target: (ctx) => ({
      url: `${ctx.service}/v1/kyc/attestations`,
      requests: [
        {
          method: 'POST',
          path: '/v1/kyc/attestations',
          headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(KYC1_REQUEST),
          setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }),
        },
      ],
    }),
    references: ['bare-post', 'bare-signed-durable'],
    goal: { ratio: 0.5, of: 'bare-post' },
    writer: (ctx) => ctx.service,
  },
  {
    kind: 'http',
    name: 'order submission (SQLite)',
    description:
      '`POST /v1/orders` end to end on the embedded SQLite with synchronous=FULL: auth, idempotency record, every check (partner, attestation, instrument, cap), durable write with `order.created`, hand-over to the sandbox partner and `order.routed`; the routing worker applies fills meanwhile',
    target: (ctx) => orderTarget(ctx.orders.sqlite),
    references: ['bare-post', 'bare-durable'],
    goal: { ratio: 0.3, of: 'bare-post' },
    writer: (ctx) => ctx.orders.sqlite.service,
  },
  {
    kind: 'http',
    name: 'order submission (PostgreSQL)',
    description:
      'The same on PostgreSQL (a throwaway database on the local server, pool of 10 connections): 6 round trips and 2 transactions a request (docs/performance.md), against the durable minimum of an order there and SQLite order submission, in the same run',
    target: (ctx) => orderTarget(ctx.orders.postgres as OrderTarget),
    references: ['bare-pg-order', 'bare-pg-commits', 'sqlite-orders', 'bare-post'],
    goal: { ratio: 0.4, of: 'bare-pg-order' },
    latencyGoal: { p99Ms: 50, atFractionOfMax: 0.5, freshUuidHeader: 'idempotency-key' },
    available: (ctx) => ctx.orders.postgres !== null,
    wire: (ctx) => (ctx.orders.postgres as OrderTarget).service,
    cpu: (ctx) => ({
      'service on PostgreSQL': { pids: [ctx.pids[(ctx.orders.postgres as OrderTarget).service] as number] },
      'service on SQLite': { pids: [ctx.pids[ctx.orders.sqlite.service] as number] },
      'bare server': { pids: [ctx.pids[ctx.bare] as number] },
      PostgreSQL: { command: 'postgres' },
      'load generator': { pids: [process.pid] },
    }),
  },
  {
    kind: 'http',
    name: 'order submission (scaled out)',
    description:
      'The order submission of PostgreSQL, with Redis for the rate limits, spread evenly over two `cauri serve --role api` processes beside one `cauri serve --role worker` (routing and fills), against one `cauri serve --role all` process taking every connection; each deployment on a database of its own on the same server',
    target: (ctx) => orderTarget((ctx.scaled as ScaledOutFixture).apis[0] as OrderTarget),
    targets: (ctx) => (ctx.scaled as ScaledOutFixture).apis.map(orderTarget),
    references: ['one-process-orders'],
    goal: { ratio: 1.5, of: 'one-process-orders' },
    cpuLabel: 'two API processes and a worker',
    available: (ctx) => ctx.scaled !== null,
    cpu: (ctx) => {
      const pids = (ctx.scaled as ScaledOutFixture).pids;
      return {
        'API 1': { pids: [pids.apis[0] as number] },
        'API 2': { pids: [pids.apis[1] as number] },
        worker: { pids: [pids.worker] },
        'one process': { pids: [pids.single] },
        PostgreSQL: { command: 'postgres' },
        Redis: { command: 'redis-server' },
        'load generator': { pids: [process.pid] },
      };
    },
  },
  {
    kind: 'http',
    name: 'positions read',
    description: `\`GET /v1/positions?subject_id=...\` for a subject with ${POSITIONS_FILLS.toLocaleString('en-US')} fills over five instruments, placed through the API before the run: token check, rate limit, one range of the positions' key (kept up to date as each fill was applied, not recomputed), the catalogue's prices and the calendar's settlement dates from memory, JSON`,
    target: (ctx) => ({
      url: `${ctx.positions.service}/v1/positions?subject_id=${ctx.positions.subject}`,
      headers: { authorization: `Bearer ${ctx.positions.token}` },
    }),
    references: ['bare-json'],
    goal: { p99Ms: 20, atFractionOfMax: 0.5 },
  },
  {
    kind: 'in-process',
    name: 'offline verification',
    description:
      '`verifyAttestation(attestation, keyDocument)` from `@cauri/verifier`, in process, on an attestation issued by the service',
    referenceLabel: 'raw `crypto.verify(null, canonicalBytes, keyObject, signature)` (key imported and bytes canonicalised once)',
    // Both sides alternate in 100 ms slices for twice the HTTP duration (so each side gets the duration).
    run: (ctx, { durationSeconds }) =>
      measureOfflineVerification(ctx.attestation, ctx.keyDocument, { totalMs: durationSeconds * 2000, sliceMs: 100, warmupMs: 1000 }),
    goal: { ratio: 0.9, of: 'raw-ed25519' },
  },
];

/**
 * The FIX connector's scenario: run apart (bench/fix.ts), inside a network namespace that has only
 * loopback, because QuickFIX's executor listens on every address. Root is needed for `unshare -n`.
 */
export const FIX_SCENARIO = {
  name: 'order submission (FIX)',
  description:
    "`POST /v1/orders` to a partner reached over FIX 4.4 (QuickFIX's `executor` as the SGI's gateway, on loopback), against the same order to the simulated Baobab Securities (the sandbox connector) on the same service, SQLite with synchronous=FULL: a limit buy of one KOLA.BRVM at the top of its band, answered once the partner has acknowledged it (`routed`)",
  goal: { ratio: 0.5, of: 'sandbox-connector' as const },
  /** p99 of the time from sending `POST /v1/orders` to the order's `order.routed` event, one order at a time. */
  handOverP99Ms: 20,
};
