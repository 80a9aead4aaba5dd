/**
 * The service's own pauses over a run, from its Prometheus metrics: the garbage collector's pauses
 * (prom-client's `nodejs_gc_duration_seconds` histogram, by kind) read before and after, and the
 * difference reported. A latency figure far above the median comes from a pause on one side or the
 * other; this says how much of it was the service's collector.
 */
export interface PauseReading {
  /** Pauses of 10 ms or more, and their total (ms), over the run. */
  longPauses: number;
  pausesMs: number;
  pauses: number;
  /** SQLite commits over the run, and the time the writer connection held the event loop (ms). */
  commits: number;
  writerMs: number;
  /** The service's event-loop delay over the run (ms; prom-client resets its reading at each scrape). */
  loopMaxMs: number;
  loopP99Ms: number;
}

type Histogram = { count: number; sum: number; over10ms: number; commits: number; writer: number; loopMax: number; loopP99: number };

async function gcHistogram(base: string): Promise<Histogram | null> {
  const res = await fetch(`${base}/metrics`).catch(() => null);
  if (res === null || res.status !== 200) return null;
  const text = await res.text();
  const total: Histogram = { count: 0, sum: 0, over10ms: 0, commits: 0, writer: 0, loopMax: 0, loopP99: 0 };
  let atMost10ms = 0;
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('cauri_db_commits{kind="commits"}')) total.commits += value;
    if (line.startsWith('cauri_db_writer_seconds_total')) total.writer += value;
    if (line.startsWith('cauri_nodejs_eventloop_lag_max_seconds')) total.loopMax = value;
    if (line.startsWith('cauri_nodejs_eventloop_lag_p99_seconds')) total.loopP99 = value;
    if (!line.startsWith('cauri_nodejs_gc_duration_seconds')) continue;
    if (line.startsWith('cauri_nodejs_gc_duration_seconds_count')) total.count += value;
    else if (line.startsWith('cauri_nodejs_gc_duration_seconds_sum')) total.sum += value;
    else if (line.includes('le="0.01"')) atMost10ms += value;
  }
  total.over10ms = total.count - atMost10ms;
  return total;
}

/** Starts a reading of `base`'s pauses; the returned function ends it (null when the metrics are not readable). */
export async function readPauses(base: string): Promise<() => Promise<PauseReading | null>> {
  const before = await gcHistogram(base);
  return async () => {
    const after = await gcHistogram(base);
    if (before === null || after === null) return null;
    return {
      pauses: after.count - before.count,
      pausesMs: Math.round((after.sum - before.sum) * 1000),
      longPauses: after.over10ms - before.over10ms,
      commits: after.commits - before.commits,
      writerMs: Math.round((after.writer - before.writer) * 1000),
      loopMaxMs: Math.round(after.loopMax * 1000),
      loopP99Ms: Math.round(after.loopP99 * 1000),
    };
  };
}

/** The commits of a reading, and on SQLite (whose writer runs on the event loop) the loop's time they held. */
export function commitText(reading: PauseReading): string {
  return reading.writerMs > 0
    ? `the SQLite writer committed ${reading.commits} times, holding the event loop ${reading.writerMs} ms in all`
    : `the database committed ${reading.commits} transactions`;
}
