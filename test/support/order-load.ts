import { randomUUID } from 'node:crypto';

/** A KYC3 attestation: no monthly cap, so every order of a load run is accepted. */
export const KYC3_REQUEST = {
  subject_id: 'inv-fault-load',
  level: 'KYC3',
  jurisdictions: ['UEMOA'],
  verifications: ['id_doc', 'selfie', 'address', 'liveness', 'source_of_funds', 'pep'].map((type) => ({
    type,
    verified_at: '2026-11-20T09:00:00Z',
  })),
};

/** What a 503 looked like, when it broke the rule (a `service_unavailable` body and `Retry-After`). */
function unavailableProblem(res: Response, text: string): string | null {
  let body: { code?: unknown; request_id?: unknown; message?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return `503 with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  const retryAfter = res.headers.get('retry-after');
  if (body.code !== 'service_unavailable' || typeof body.request_id !== 'string' || typeof body.message !== 'string')
    return `503 with body ${text.slice(0, 300)}`;
  if (retryAfter === null || !/^[1-9]\d*$/.test(retryAfter)) return `503 with Retry-After ${String(retryAfter)}`;
  return null;
}

/**
 * Orders submitted without pause by `workers` concurrent clients, as a careful integrator does: each
 * order has its Idempotency-Key, and an order that was not acknowledged (a 503, a 409 while the first
 * attempt still holds the key, a connection that broke) is sent again with the same key, to one of
 * the live processes, until it is. What every answer was is counted, and anything the service should
 * never answer is kept in `problems`.
 */
export class OrderLoad {
  /** Idempotency-Key → order id, for every order acknowledged (201). */
  readonly acknowledged = new Map<string, string>();
  readonly statuses = new Map<number, number>();
  /** 503s that carried the `service_unavailable` body and a whole-seconds Retry-After. */
  unavailable = 0;
  connectionErrors = 0;
  readonly problems: string[] = [];
  #running = false;
  #loops: Promise<void>[] = [];
  #turn = 0;

  constructor(
    /** The base URLs of the processes to send to now (a killed one is taken out by the test). */
    private readonly targets: () => string[],
    private readonly token: string,
    private readonly body: string,
    private readonly options: { retryPauseMs?: number; keyDeadlineMs?: number } = {},
  ) {}

  start(workers: number): void {
    this.#running = true;
    for (let i = 0; i < workers; i++) this.#loops.push(this.#loop());
  }

  /** Stops starting new orders; resolves once every order begun is acknowledged (or given up, a problem). */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  /** Answers counted so far, by status, as `status×count`. */
  summary(): string {
    return (
      [...this.statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ') + ` connection errors×${this.connectionErrors}`
    );
  }

  async #loop(): Promise<void> {
    while (this.#running) await this.#submit(randomUUID());
  }

  async #submit(key: string): Promise<void> {
    const deadline = Date.now() + (this.options.keyDeadlineMs ?? 40_000);
    while (Date.now() < deadline) {
      const targets = this.targets();
      const base = targets[this.#turn++ % targets.length];
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${base}/v1/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: this.body,
          signal: AbortSignal.timeout(15_000),
        });
        text = await res.text();
      } catch {
        this.connectionErrors++;
        await pause(this.options.retryPauseMs ?? 200);
        continue;
      }
      this.statuses.set(res.status, (this.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 201) {
        const id = (JSON.parse(text) as { id: string }).id;
        const earlier = this.acknowledged.get(key);
        if (earlier !== undefined && earlier !== id) this.problems.push(`key ${key} acknowledged as ${earlier} and then as ${id}`);
        this.acknowledged.set(key, id);
        return;
      }
      if (res.status === 503) {
        const problem = unavailableProblem(res, text);
        if (problem === null) this.unavailable++;
        else this.problems.push(problem);
      } else if (res.status !== 409) {
        this.problems.push(`${res.status}: ${text.slice(0, 300)}`);
      }
      await pause(this.options.retryPauseMs ?? 200);
    }
    this.problems.push(`order with key ${key} not acknowledged within ${this.options.keyDeadlineMs ?? 40_000} ms`);
  }
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 100 ms until it returns true; throws `message` after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, message: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(message());
    await pause(100);
  }
}
