import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Gives a service process one core of its own and the harness (its load generator's thread
 * included) the others, for the length of a latency read, then puts both back on every core.
 *
 * On a machine of two cores the load generator and the service otherwise take turns on the same
 * cores: a request due while the generator holds the core the service needs waits a scheduler's time
 * slice, and that wait is counted as the service's latency. A client on another machine takes no
 * CPU from the service; one core each is the nearest this machine comes to that. Returns null (and
 * pins nothing) on one core, or where `taskset` is missing.
 */
export function pinApart(servicePid: number): { restore: () => void; serviceCpus: string; harnessCpus: string } | null {
  const cores = availableParallelism();
  if (cores < 2) return null;
  const all = `0-${cores - 1}`;
  const harnessCpus = cores === 2 ? '1' : `1-${cores - 1}`;
  const set = (pid: number, cpus: string) =>
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { stdio: 'ignore' });
  try {
    set(servicePid, '0');
    set(process.pid, harnessCpus);
  } catch {
    try {
      set(servicePid, all);
      set(process.pid, all);
    } catch {
      // Nothing was pinned.
    }
    return null;
  }
  return {
    serviceCpus: '0',
    harnessCpus,
    // taskset walks the process's threads and fails when one ends meanwhile: tried again.
    restore: () => {
      for (const pid of [servicePid, process.pid]) {
        for (let attempt = 1; ; attempt++) {
          try {
            set(pid, all);
            break;
          } catch (error) {
            if (attempt === 5) throw error;
          }
        }
      }
    },
  };
}
