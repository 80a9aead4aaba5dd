// Shared by the webhook delivery tests: a receiver that records what it gets, and a runtime with a hand-driven delivery worker.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { Runtime } from '../../src/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { WebhookOptions } from '../../src/webhooks/index.js';
import type { DeliveryWorker } from '../../src/workers/delivery-worker.js';
import { listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/api.js';
import { startDeliveryWorker } from '../support/delivery-worker.js';

export type Json = Record<string, any>;
export const stripe = new Stripe('sk_test_x');

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The service clock when the request arrived, in Unix seconds (the verifier's "now"). */
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
}

/** A real HTTP receiver on a loopback port; `handle` answers (default 200). */
export async function receiver(
  t: TestContext,
  clock: ManualClock,
  handle?: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Math.floor(clock.now().getTime() / 1000) });
      if (handle === undefined) res.writeHead(200).end('ok');
      else handle(req, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** Verifies a delivery with the official Stripe SDK, as a receiver would. */
export function verify(r: Received, secret: string): Json {
  return stripe.webhooks.constructEvent(r.body, r.headers['x-cauri-signature'] as string, secret, 300, undefined, r.at) as unknown as Json;
}

export interface Ctx {
  runtime: Runtime;
  env: TestEnvironment;
  clock: ManualClock;
  base: string;
  api: ApiClient;
  worker: DeliveryWorker;
  newWorker: (options?: Partial<WebhookOptions>) => DeliveryWorker;
  /** A fresh access token for `api` (the clock may have moved past the first one's 15 minutes). */
  call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>;
  endpoint: (url: string, events?: string[]) => Promise<{ id: string; secret: string }>;
  /** Stores an event as the other modules do (an order's change), for this client. */
  emit: (type?: string) => Promise<string>;
  deliveries: (query?: string) => Promise<Json[]>;
}

export async function setup(
  t: TestContext,
  database: DatabaseCase,
  env: Record<string, string> = {},
  options: Partial<WebhookOptions> = {},
): Promise<Ctx> {
  const clock = new ManualClock(new Date());
  const e = testEnvironment(t, database, { CAURI_WORKERS: 'none', ...env }, { clock });
  const runtime = await startRuntimeIn(t, e);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const newWorker = (more: Partial<WebhookOptions> = {}) =>
    startDeliveryWorker(t, runtime, clock, { timeoutMs: 2000, ...options, ...more });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret }),
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    return fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  };
  const worker = newWorker();
  await worker.prepare();
  return {
    runtime,
    env: e,
    clock,
    base,
    api,
    worker,
    newWorker,
    call,
    endpoint: async (url, events = ['order.created']) => {
      const res = await api.post('/v1/webhooks/endpoints', { url, events });
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as { id: string; secret: string };
    },
    emit: async (type = 'order.created') => {
      const { recordEvent } = await import('../../src/events/event.service.js');
      const event = await runtime.storage.db.transaction().execute((trx) =>
        recordEvent(trx, {
          clientId: api.clientId as never,
          type: type as never,
          data: { id: 'ord_sample', status: 'created' },
          livemode: false,
          at: clock.now(),
        }),
      );
      return event.id;
    },
    deliveries: async (query = '') => {
      const res = await call('GET', `/v1/webhooks/deliveries${query}`);
      assert.equal(res.status, 200);
      return ((await res.json()) as { data: Json[] }).data;
    },
  };
}

/** Moves the clock to `offset` ms after `start` and runs one worker pass. */
export async function at(c: Ctx, start: number, offset: number, worker = c.worker) {
  c.clock.set(start + offset);
  return worker.runOnce();
}
