import { Counter, type Registry } from 'prom-client';

/** What one database step of the delivery worker handled (its units) and the wall time it took, in seconds. */
export interface StepFigures {
  units: number;
  seconds: number;
}

/**
 * What the delivery worker has done since it was created, for /metrics and the benchmark. Each step's
 * time is the wall time of its database work (the whole transaction, commit included; on PostgreSQL
 * the round trips too), so seconds divided by units is what one unit of the step costs.
 */
export interface DeliveryWorkerStats {
  /** Events fanned out, and the fan-out transactions' time. */
  fanOut: StepFigures;
  /** Deliveries leased, and the claims' time: the due scan, the lease transaction, the reads of endpoints and bodies. */
  claim: StepFigures;
  /** Attempts recorded with their delivery's new state, and the recording transactions' time. */
  record: StepFigures;
  /** Deliveries added to their clients' listing index in batches (SQLite), and the time it took. */
  list: StepFigures;
  /**
   * The running worker's combined transactions (see DeliveryWorker): how many committed, and the time
   * of their begin and commit, which the steps above share there and do not include.
   */
  commit: StepFigures;
  /** Attempts made, by outcome: a 2xx, or anything else (status, timeout, refusal, network error). */
  attempts: { succeeded: number; failed: number };
}

export function emptyDeliveryStats(): DeliveryWorkerStats {
  return {
    fanOut: { units: 0, seconds: 0 },
    claim: { units: 0, seconds: 0 },
    record: { units: 0, seconds: 0 },
    list: { units: 0, seconds: 0 },
    commit: { units: 0, seconds: 0 },
    attempts: { succeeded: 0, failed: 0 },
  };
}

/** Adds `units` and the time since `started` (a performance.now() reading) to a step. */
export function countStep(step: StepFigures, units: number, started: number): void {
  step.units += units;
  step.seconds += (performance.now() - started) / 1000;
}

const WORKER_STEPS = [
  ['fan_out', 'fanOut'],
  ['claim', 'claim'],
  ['record', 'record'],
  ['list', 'list'],
  ['commit', 'commit'],
] as const;

/** Registers the delivery worker's series on `registry`, read from `stats` when Prometheus scrapes. */
export function registerDeliveryMetrics(registry: Registry, stats: () => DeliveryWorkerStats): void {
  const attempts = new Counter({
    name: 'cauri_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome (succeeded: a 2xx answer; failed: anything else).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const figures = stats();
      attempts.reset();
      attempts.inc({ outcome: 'succeeded' }, figures.attempts.succeeded);
      attempts.inc({ outcome: 'failed' }, figures.attempts.failed);
    },
  });
  const stepCounter = (name: string, help: string, read: (step: StepFigures) => number) => {
    const counter = new Counter({
      name,
      help,
      labelNames: ['step'],
      registers: [registry],
      collect() {
        const figures = stats();
        counter.reset();
        for (const [label, key] of WORKER_STEPS) counter.inc({ step: label }, read(figures[key]));
      },
    });
  };
  stepCounter(
    'cauri_webhook_worker_seconds_total',
    "Time the webhook delivery worker of this process spent in each database step: fan-out, claim and record (a step run in a transaction of its own includes its commit), and the begin and commit of the running worker's combined transactions.",
    (step) => step.seconds,
  );
  stepCounter(
    'cauri_webhook_worker_units_total',
    'What each step of the webhook delivery worker handled: events fanned out, due deliveries claimed, attempts recorded, combined transactions committed.',
    (step) => step.units,
  );
}
