import { CountersProbe } from './load.js';

/** The service's counters that say where a request's time went. */
interface Counters {
  work: number;
  commit: number;
  commits: number;
  units: number;
  cpu: number;
  at: number;
}

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`/metrics has no ${series}`);
  return Number(line.slice(series.length + 1));
}

async function read(service: string): Promise<Counters> {
  const response = await fetch(`${service}/metrics`);
  if (!response.ok) throw new Error(`${service}/metrics answered ${response.status}`);
  const text = await response.text();
  return {
    work: sample(text, 'cauri_db_writer_seconds_total{phase="work"}'),
    commit: sample(text, 'cauri_db_writer_seconds_total{phase="commit"}'),
    commits: sample(text, 'cauri_db_commits{kind="commits"}'),
    units: sample(text, 'cauri_db_commits{kind="units"}'),
    cpu: sample(text, 'cauri_process_cpu_seconds_total'),
    at: performance.now() / 1000,
  };
}

/**
 * Reads the service's SQLite writer counters and CPU around each measured run of ours, and adds up
 * the differences: the measured limit of a write scenario, in the report's words.
 */
export class WriterProbe extends CountersProbe<keyof Counters> {
  readonly #service: string;

  constructor(service: string) {
    super({ work: 0, commit: 0, commits: 0, units: 0, cpu: 0, at: 0 });
    this.#service = service;
  }

  protected read(): Promise<Counters> {
    return read(this.#service);
  }

  /**
   * The report's paragraph: the writer's busy share and time per request, the process's CPU per
   * request, and what the goal would allow a request of the event loop in all.
   */
  note(requests: number, goal: { ratio: number; referenceRps: number; referenceLabel: string } | undefined): string {
    const t = this.total;
    const us = (seconds: number) => Math.round((seconds / requests) * 1e6);
    const pct = (x: number) => `${Math.round(x * 100)} %`;
    const parts = [
      `While ours was measured (${t.at.toFixed(1)} s, ${requests.toLocaleString('en-US')} requests answered), ` +
        `the SQLite writer was busy ${pct((t.work + t.commit) / t.at)} of the time: per request, ` +
        `${us(t.work)} µs running units of work (statements and savepoints) and ${us(t.commit)} µs in \`COMMIT\` ` +
        `(WAL pages, fsync, checkpoints), over ${(t.units / requests).toFixed(1)} units a request and ` +
        `${(t.units / t.commits).toFixed(1)} units a commit (\`cauri_db_writer_seconds_total\`, \`cauri_db_commits\`). ` +
        `The service process used ${us(t.cpu)} µs of CPU a request, every thread.`,
    ];
    if (goal !== undefined) {
      const allowed = 1e6 / (goal.ratio * goal.referenceRps);
      parts.push(
        `At the goal (${pct(goal.ratio)} of this run's ${goal.referenceLabel}, ${Math.round(goal.ratio * goal.referenceRps).toLocaleString('en-US')} a second) ` +
          `a request may take ${Math.round(allowed)} µs of the event loop in all; better-sqlite3 runs on the event loop, ` +
          `and the writer alone took ${us(t.work + t.commit)} µs a request (${pct((t.work + t.commit) / requests / (allowed / 1e6))} of that). ` +
          `SQLite has one writer, so that time is serial wherever it runs: even on a thread of its own, with nothing else on it, ` +
          `it would cap the scenario at ${Math.round(requests / (t.work + t.commit)).toLocaleString('en-US')} a second, ` +
          `${pct(requests / (t.work + t.commit) / goal.referenceRps)} of the ${goal.referenceLabel}.`,
      );
    }
    return parts.join(' ');
  }
}
