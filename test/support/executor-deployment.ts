import type { TestContext } from 'node:test';
import { openDatabase, type Runtime } from '../../src/app.js';
import { newId } from '../../src/lib/ids.js';
import { commitSent, findSession, insertMessage, insertOrderAtPartner, insertRequest } from '../../src/routing/fix/fix.repository.js';
import { newOrderSingle } from '../../src/routing/fix/mapping.js';
import { orderRow } from './orders.js';
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

/**
 * What a crash leaves when it strikes after a NewOrderSingle was committed as sent and before its
 * bytes left: an order of 7 KOLA.BRVM at 14,500.00 for `clientId`, handed over in the database at
 * `at` (the message stored under the session's next sequence number), the gateway never told. The
 * service must not be running. Returns the order's id and the message's sequence number.
 */
export async function orderSentNotDelivered(
  d: ExecutorDeployment,
  clientId: string,
  at: number,
  account: string | null = null,
): Promise<{ orderId: string; seq: number }> {
  const orderId = newId('order');
  const storage = await openDatabase(d.env.config, d.env.options);
  let seq = 0;
  try {
    await storage.transact(async (trx) => {
      await trx
        .insertInto('orders')
        .values(
          orderRow({
            id: orderId,
            client_id: clientId,
            created_at: at,
            status: 'created',
            rcpt_to: d.partnerId,
            connector: 'fix',
            qty: 7,
            limit_price_cents: 1_450_000,
            next_route_at: at,
            ...(account === null ? {} : { account }),
          }),
        )
        .execute();
      seq = (await findSession(trx, d.partnerId))?.next_sender_seq ?? 0;
      const body = JSON.stringify(
        newOrderSingle(
          {
            order_id: orderId,
            instrument: 'KOLA.BRVM',
            instrument_status: 'active',
            side: 'buy',
            qty: 7,
            limit_price_cents: 1_450_000,
            reference_price_cents: 100,
            ...(account === null ? {} : { account }),
          },
          { defaultAccount: 'CAURI-TEST', transactTime: at },
        ),
      );
      await commitSent(trx, d.partnerId, seq, at);
      await insertMessage(trx, { partner_id: d.partnerId, seq, msg_type: 'D', cl_ord_id: orderId, sending_time: at, body });
      await insertOrderAtPartner(trx, {
        partner_id: d.partnerId,
        order_id: orderId,
        side: 'buy',
        qty: 7,
        instrument: 'KOLA.BRVM',
        body,
        state: 'sent',
        cum_qty: 0,
        report_seq: 0,
        partner_order_id: null,
        created_at: at,
        updated_at: at,
      });
      await insertRequest(trx, {
        partner_id: d.partnerId,
        cl_ord_id: orderId,
        order_id: orderId,
        kind: 'new',
        seq,
        state: 'pending',
        terms: null,
        created_at: at,
      });
    });
  } finally {
    await storage.close();
  }
  return { orderId, seq };
}
