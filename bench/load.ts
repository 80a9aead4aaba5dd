import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';

/** What one load run measured. */
export interface Measurement {
  /** Requests per second, the mean of autocannon's per-second samples. */
  rps: number;
  p50: number;
  p99: number;
  /** Requests answered with a 2xx. */
  ok: number;
  seconds: number;
}

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** autocannon options without the parts the harness sets (connections and duration). */
export type LoadTarget = Omit<AutocannonOptions, 'connections' | 'duration'>;

function check(label: string, result: AutocannonResult): void {
  const problems: string[] = [];
  if (result.non2xx > 0) problems.push(`${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats)})`);
  if (result.errors > 0) problems.push(`${result.errors} connection errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  if (result['2xx'] === 0) problems.push('no 2xx answer at all');
  if (problems.length > 0) throw new ScenarioError(`${label}: ${problems.join('; ')}`);
}

/** Called right before and right after the measured run (not the warm-up), e.g. to read counters. */
export interface Probe {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A probe that reads a set of counters before and after each run and adds up the differences in
 * `total` (its subclasses read a service's /metrics).
 */
export abstract class CountersProbe<K extends string> implements Probe {
  #start: Record<K, number> | undefined;

  constructor(readonly total: Record<K, number>) {}

  protected abstract read(): Promise<Record<K, number>>;

  async start(): Promise<void> {
    this.#start = await this.read();
  }

  async stop(): Promise<void> {
    const end = await this.read();
    const start = this.#start;
    if (start === undefined) throw new Error(`${this.constructor.name}.stop before start`);
    for (const key of Object.keys(this.total) as K[]) this.total[key] += end[key] - start[key];
    this.#start = undefined;
  }
}

/** Several probes around the same run, started and stopped in turn. */
export function probes(...list: (Probe | undefined)[]): Probe | undefined {
  const present = list.filter((p): p is Probe => p !== undefined);
  if (present.length <= 1) return present[0];
  return {
    start: async () => {
      for (const p of present) await p.start();
    },
    stop: async () => {
      for (const p of present) await p.stop();
    },
  };
}

/**
 * A short warm-up run (JIT, connection pools, caches), then the measured run. Any non-2xx answer,
 * connection error or timeout in either fails the scenario.
 */
export async function measure(
  label: string,
  target: LoadTarget,
  settings: {
    connections: number;
    duration: number;
    warmup: number /** Requests a second from all connections together; unset: as fast as answered. */;
    rate?: number;
  },
  probe?: Probe,
): Promise<Measurement> {
  if (settings.warmup > 0) {
    check(`${label} (warm-up)`, await autocannon({ ...target, connections: settings.connections, duration: settings.warmup }));
  }
  const rate = settings.rate === undefined ? {} : { overallRate: Math.max(1, Math.round(settings.rate)) };
  await probe?.start();
  const result = await autocannon({ ...target, ...rate, connections: settings.connections, duration: settings.duration });
  await probe?.stop();
  check(label, result);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, ok: result['2xx'], seconds: result.duration };
}

/**
 * The same load spread over several processes of one deployment (as a load balancer would), the
 * connections shared out evenly: one autocannon run per target, side by side. The rate is their sum;
 * p50 and p99 are the slowest target's.
 */
export async function measureSplit(
  label: string,
  targets: LoadTarget[],
  settings: { connections: number; duration: number; warmup: number },
  probe?: Probe,
): Promise<Measurement> {
  const share = (i: number) => Math.floor(settings.connections / targets.length) + (i < settings.connections % targets.length ? 1 : 0);
  if (settings.warmup > 0) {
    const warm = await Promise.all(targets.map((target, i) => autocannon({ ...target, connections: share(i), duration: settings.warmup })));
    warm.forEach((result, i) => check(`${label} (warm-up, process ${i + 1})`, result));
  }
  await probe?.start();
  const results = await Promise.all(
    targets.map((target, i) => autocannon({ ...target, connections: share(i), duration: settings.duration })),
  );
  await probe?.stop();
  results.forEach((result, i) => check(`${label} (process ${i + 1})`, result));
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    ok: results.reduce((sum, r) => sum + r['2xx'], 0),
    seconds: Math.max(...results.map((r) => r.duration)),
  };
}
