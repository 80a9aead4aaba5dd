import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { RateLimitStoreHealth } from './rate-limit.js';
import type { CommitStats } from '../storage/database.js';
import type { WireStats } from '../storage/pg-prepared.js';

export interface MetricsSources {
  poolStats(): { total: number; idle: number; waiting: number };
  commitStats(): CommitStats;
  /** What this process has sent to PostgreSQL; null on SQLite (optional). */
  wireStats?(): WireStats | null;
  pendingEvents(): Promise<number>;
  /** Signed attestation documents held in memory by the read endpoint (optional). */
  cachedDocuments?(): number;
  /** The FIX partners' sessions this process keeps up (optional). */
  fixSessions?(): { partnerId: string; loggedOn: boolean }[];
  /** FIX partners' messages this process did not apply, by reason (optional). */
  fixRefusedMessages?(): { partnerId: string; reason: string; count: number }[];
  /** The rate-limit store: whether it counts in memory because Redis does not answer (optional). */
  rateLimitStore?(): RateLimitStoreHealth;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The requests of one method on one route template: counts per status code, and latency observations
 * per bucket (not cumulative; the last slot is above every bound).
 */
class RouteSeries {
  readonly labels: { method: string; route: string };
  readonly statuses = new Map<number, number>();
  readonly counts = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  constructor(method: string, route: string) {
    this.labels = { method, route };
  }

  record(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }

  /** Zeroes the series in place: route hooks keep their reference to it. */
  reset(): void {
    this.statuses.clear();
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/**
 * Request counts and latencies, kept in plain objects and handed to Prometheus when it scrapes.
 * prom-client validates and hashes the label object of every update, which cost about a tenth of the
 * throughput of a cheap authenticated GET. Each route's hook holds its own series (see
 * Metrics.routeRecorder), so an update is two additions and a lookup by status code.
 */
class HttpStats {
  readonly series = new Map<string, RouteSeries>();

  get(method: string, route: string): RouteSeries {
    const key = `${method} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = new RouteSeries(method, route);
      this.series.set(key, series);
    }
    return series;
  }
}

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one) so that
 * several app instances in one process, as in tests, do not mix their counts.
 */
export type ConnectionCloseReason = 'request_timeout' | 'malformed_request' | 'max_connections';

export class Metrics {
  readonly registry = new Registry();
  readonly #http = new HttpStats();
  readonly #connectionsClosed: Counter<'reason'>;

  /** Counts a connection the server closed before any route answered it. */
  recordConnectionClosed(reason: ConnectionCloseReason): void {
    this.#connectionsClosed.inc({ reason });
  }

  /** Counts a finished request under its route template and observes its latency. */
  recordRequest(method: string, route: string, status: number, seconds: number): void {
    this.#http.get(method, route).record(status, seconds);
  }

  /**
   * recordRequest for one route template, made once when the route is registered: it looks the
   * series up by method alone, without building a key per request.
   */
  routeRecorder(route: string): (method: string, status: number, seconds: number) => void {
    const byMethod = new Map<string, RouteSeries>();
    return (method, status, seconds) => {
      let series = byMethod.get(method);
      if (series === undefined) {
        series = this.#http.get(method, route);
        byMethod.set(method, series);
      }
      series.record(status, seconds);
    };
  }

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry, prefix: 'cauri_' });
    const http = this.#http;
    const requests = new Counter({
      name: 'cauri_http_requests_total',
      help: 'HTTP requests by route template and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
      collect() {
        requests.reset();
        for (const series of http.series.values()) {
          for (const [status, n] of series.statuses) requests.inc({ ...series.labels, status: String(status) }, n);
        }
      },
    });
    this.#connectionsClosed = new Counter({
      name: 'cauri_http_connections_closed_total',
      help: 'Connections the HTTP server closed before a route answered: a request not received in time (reason="request_timeout", answered 408), a malformed request (reason="malformed_request"), or a connection over CAURI_HTTP_MAX_CONNECTIONS (reason="max_connections", closed unanswered).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    const latencyName = 'cauri_http_request_duration_seconds';
    const latency = {
      name: latencyName,
      help: 'HTTP request latency by route template.',
      type: 'histogram',
      aggregator: 'sum',
      reset() {
        for (const series of http.series.values()) series.reset();
      },
      async get() {
        const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
        for (const series of http.series.values()) {
          let cumulative = 0;
          LATENCY_BUCKETS.forEach((bound, i) => {
            cumulative += series.counts[i] ?? 0;
            values.push({ metricName: `${latencyName}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative });
          });
          values.push({ metricName: `${latencyName}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count });
          values.push({ metricName: `${latencyName}_sum`, labels: series.labels, value: series.sum });
          values.push({ metricName: `${latencyName}_count`, labels: series.labels, value: series.count });
        }
        return { name: latencyName, help: latency.help, type: 'histogram', values, aggregator: 'sum' };
      },
    };
    this.registry.registerMetric(latency as unknown as Metric);
    const pool = new Gauge({
      name: 'cauri_db_pool_connections',
      help: 'Database connections by state (PostgreSQL pool; SQLite has one).',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const s = sources.poolStats();
        pool.set({ state: 'total' }, s.total);
        pool.set({ state: 'idle' }, s.idle);
        pool.set({ state: 'waiting' }, s.waiting);
      },
    });
    const commits = new Gauge({
      name: 'cauri_db_commits',
      help: 'Database commits since start (kind="commits"), and the units of work they carried (kind="units"; group commit on SQLite).',
      labelNames: ['kind'],
      registers: [this.registry],
      collect() {
        const s = sources.commitStats();
        commits.set({ kind: 'commits' }, s.batches);
        commits.set({ kind: 'units' }, s.units);
      },
    });
    const writer = new Counter({
      name: 'cauri_db_writer_seconds_total',
      help: 'SQLite: time the one writer connection spent on group commits, running their units of work (phase="work") and in COMMIT (phase="commit": WAL writes, fsync, checkpoints). Its rate is the share of time the writer is busy. Not reported on PostgreSQL.',
      labelNames: ['phase'],
      registers: [this.registry],
      collect() {
        const s = sources.commitStats();
        writer.reset();
        if (s.workSeconds !== undefined) writer.inc({ phase: 'work' }, s.workSeconds);
        if (s.commitSeconds !== undefined) writer.inc({ phase: 'commit' }, s.commitSeconds);
      },
    });
    const wire = new Counter({
      name: 'cauri_db_wire_total',
      help: 'PostgreSQL: statements this process sent (kind="statements"), the round trips they took (kind="round_trips": statements sent together, answered in one go, count once) and the transactions they ran in (kind="transactions"). Not reported on SQLite.',
      labelNames: ['kind'],
      registers: [this.registry],
      collect() {
        const s = sources.wireStats?.() ?? null;
        wire.reset();
        if (s === null) return;
        wire.inc({ kind: 'statements' }, s.statements);
        wire.inc({ kind: 'round_trips' }, s.roundTrips);
        wire.inc({ kind: 'transactions' }, s.transactions);
      },
    });
    const documents = new Gauge({
      name: 'cauri_attestation_documents_cached',
      help: 'Signed attestation documents held in memory by this process (at most 10,000).',
      registers: [this.registry],
      collect() {
        documents.set(sources.cachedDocuments?.() ?? 0);
      },
    });
    const fix = new Gauge({
      name: 'cauri_fix_session_logged_on',
      help: 'Per FIX partner whose session this process keeps up: 1 while logged on, 0 otherwise.',
      labelNames: ['partner'],
      registers: [this.registry],
      collect() {
        fix.reset();
        for (const session of sources.fixSessions?.() ?? []) fix.set({ partner: session.partnerId }, session.loggedOn ? 1 : 0);
      },
    });
    const refused = new Counter({
      name: 'cauri_fix_messages_refused_total',
      help: "FIX partners' messages this process did not apply, by reason: garbled (ignored and asked for again), session_reject (refused with a Reject, 35=3), unknown_order (an ExecutionReport for an order this service did not send).",
      labelNames: ['partner', 'reason'],
      registers: [this.registry],
      collect() {
        refused.reset();
        for (const { partnerId, reason, count } of sources.fixRefusedMessages?.() ?? []) refused.inc({ partner: partnerId, reason }, count);
      },
    });
    const degraded = new Gauge({
      name: 'cauri_rate_limit_store_degraded',
      help: 'Whether this process counts rate limits in its own memory because Redis does not answer (1) or shares them through Redis or needs no Redis (0).',
      registers: [this.registry],
      collect() {
        degraded.set(sources.rateLimitStore?.().degraded === true ? 1 : 0);
      },
    });
    const outages = new Counter({
      name: 'cauri_rate_limit_store_outages_total',
      help: 'Times this process found Redis unreachable and began counting rate limits in memory.',
      registers: [this.registry],
      collect() {
        outages.reset();
        outages.inc(sources.rateLimitStore?.().outages ?? 0);
      },
    });
    const backlog = new Gauge({
      name: 'cauri_events_pending_dispatch',
      help: 'Recorded events not yet fanned out to webhook endpoints.',
      registers: [this.registry],
      async collect() {
        backlog.set(await sources.pendingEvents());
      },
    });
  }
}
