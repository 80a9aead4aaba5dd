import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  poolStats(): { total: number; idle: number; waiting: number };
  commitStats(): { batches: number; units: number };
  pendingEvents(): Promise<number>;
}

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one) so that
 * several app instances in one process, as in tests, do not mix their counts.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly latency: Histogram<'method' | 'route'>;

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry, prefix: 'cauri_' });
    this.requests = new Counter({
      name: 'cauri_http_requests_total',
      help: 'HTTP requests by route template and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'cauri_http_request_duration_seconds',
      help: 'HTTP request latency by route template.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
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
