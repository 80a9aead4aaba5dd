import type { TestContext } from 'node:test';
import type { Runtime } from '../../src/app.js';
import type { ApiClient } from './api.js';
import { fixDeployment, waitFor, type InProcessDeployment, type Json } from './fix-deployment.js';
import type { DatabaseCase } from './harness.js';
import { startExecutor, type Executor, type FixMessage } from './quickfix.js';

export { eventsOf, fillsOf, getOrder, orderWhen, placeOrder, waitFor } from './fix-deployment.js';

/** The Password (554) every deployment here logs on with: tests look for it in the logs. */
export const FIX_PASSWORD = 's3cret-Pa55';

export interface ExecutorDeployment extends InProcessDeployment {
  executor: Executor;
  start(): Promise<{ runtime: Runtime; api: ApiClient; base: string }>;
}

/**
 * An executor, and a deployment (fix-deployment.ts) whose partner "Executor Titres" reaches it over
 * FIX on 127.0.0.1 in plaintext, its credentials stored (`cauri-user` / FIX_PASSWORD). `fix` adds
 * to or replaces members of the partner's `fix` settings. `logs`: the runtimes log at trace level
 * into `logs`. `start` waits for the FIX session to log on unless `waitForLogon` is false.
 */
export async function executorDeployment(
  t: TestContext,
  database: DatabaseCase,
  port: number,
  options: { fix?: Json; logs?: boolean; executor?: Parameters<typeof startExecutor>[2]; waitForLogon?: boolean } = {},
): Promise<ExecutorDeployment> {
  const executor = await startExecutor(t, port, options.executor ?? {});
  const deployment = await fixDeployment(
    t,
    database,
    { port: executor.port },
    {
      partner: { name: 'Executor Titres', password: FIX_PASSWORD, ...(options.fix === undefined ? {} : { fix: options.fix }) },
      logs: options.logs === true,
    },
  );
  return {
    ...deployment,
    executor,
    start: () => deployment.start({ logon: options.waitForLogon !== false }),
  };
}

/** The executor's log arrives through a pipe, after the messages themselves: wait for what a check reads. */
export const logged = (check: () => boolean) => waitFor("the executor's log", check, 5000);
/** The messages of `msgType` that a QuickFIX program (the executor, ordermatch) received, or sent. */
export const received = (executor: Pick<Executor, 'messages'>, msgType: string): FixMessage[] =>
  executor.messages().filter((m) => m.direction === 'incoming' && m.fields.get(35) === msgType);
export const sent = (executor: Pick<Executor, 'messages'>, msgType: string): FixMessage[] =>
  executor.messages().filter((m) => m.direction === 'outgoing' && m.fields.get(35) === msgType);
/** The messages whose ClOrdID (11) is `id`. */
export const withClOrdId = <M extends { fields: Map<number, string> }>(messages: M[], id: string): M[] =>
  messages.filter((m) => m.fields.get(11) === id);

/**
 * A sample's value in a Prometheus text exposition: `name{labels}` with exactly these labels (in any
 * order); 0 when the series is absent.
 */
export function sample(exposition: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const have = (match[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? [];
    if (have.sort().join(',') === wanted) return Number(match[3]);
  }
  return 0;
}
