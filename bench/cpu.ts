import { readdirSync, readFileSync } from 'node:fs';
import type { Probe } from './load.js';

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on Linux everywhere). */
const TICKS = 100;

/** CPU seconds (user and system) a process has used so far; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Every process of the machine whose command is `name` (PostgreSQL's server and its backends). */
function processesNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A group of processes whose CPU is added up: fixed pids, or every process of a command name. */
export type CpuGroup = { pids: number[] } | { command: string };

/**
 * How the machine's cores were shared during the measured runs: the CPU seconds each group used,
 * summed over the runs, against the runs' wall-clock time. PostgreSQL's group is every `postgres`
 * process of the machine, so other work on the same server counts too.
 */
export class CpuProbe implements Probe {
  readonly #groups: Record<string, CpuGroup>;
  #start: { at: number; used: Record<string, number> } | undefined;
  readonly used: Record<string, number> = {};
  seconds = 0;

  constructor(groups: Record<string, CpuGroup>) {
    this.#groups = groups;
    for (const name of Object.keys(groups)) this.used[name] = 0;
  }

  #read(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, group] of Object.entries(this.#groups)) {
      const pids = 'pids' in group ? group.pids : processesNamed(group.command);
      out[name] = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    }
    return out;
  }

  async start(): Promise<void> {
    this.#start = { at: performance.now() / 1000, used: this.#read() };
  }

  async stop(): Promise<void> {
    if (this.#start === undefined) return;
    const now = this.#read();
    this.seconds += performance.now() / 1000 - this.#start.at;
    // A postgres backend that ended during the run takes its CPU with it: never count less than 0.
    for (const name of Object.keys(now))
      this.used[name] = (this.used[name] ?? 0) + Math.max(0, (now[name] ?? 0) - (this.#start.used[name] ?? 0));
    this.#start = undefined;
  }

  /** `name 0.62` per group: the cores each kept busy on average (1.00 is one core all the time). */
  summary(): string {
    return Object.entries(this.used)
      .map(([name, used]) => `${name} ${(this.seconds > 0 ? used / this.seconds : 0).toFixed(2)}`)
      .join(', ');
  }

  /** `name 1.24 ms` per group: the CPU time each used for every request answered during the runs. */
  perRequest(requests: number): string {
    return Object.entries(this.used)
      .map(([name, used]) => `${name} ${requests > 0 ? ((used / requests) * 1000).toFixed(2) : '—'} ms`)
      .join(', ');
  }
}
