import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CauriClient } from './client.js';
import type {
  AmendRequest,
  Attestation,
  components,
  ErrorBody,
  Event,
  EventOf,
  EventType,
  Fill,
  ListItem,
  ListPath,
  ListQuery,
  Order,
  OrderRequest,
  Partner,
  PathParams,
  Position,
  Statement,
  StatementRequest,
  QueryParams,
  RequestBody,
  ResponseBody,
  TokenResponse,
  WebhookEvent,
} from './types.js';

// Compile-time checks that the derived types carry the generated ones (not `unknown` or `any`): each
// line fails `tsc -b` when a derivation breaks.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const checks = {
  orderStatus: true satisfies Equal<Order['status'], 'created' | 'routed' | 'partially_filled' | 'filled' | 'failed' | 'cancelled'>,
  orderSide: true satisfies Equal<OrderRequest['side'], 'buy' | 'sell'>,
  timeInForce: true satisfies Equal<Order['time_in_force'], 'day' | 'gtc' | 'gtd' | 'ioc' | 'fok'>,
  cancelReason: true satisfies Equal<Order['cancel_reason'], 'requested' | 'expired' | 'unfilled' | 'partner' | null>,
  amendBody: true satisfies Equal<AmendRequest, { qty?: number; limit_price_cents?: number }>,
  fillSettles: true satisfies Equal<Fill['settlement_date'], string>,
  positionAverage: true satisfies Equal<Position['average_cost_cents'], number | null>,
  positionRealised: true satisfies Equal<Position['realised_pnl_cents'], number>,
  statementHoldings: true satisfies Equal<
    StatementRequest['holdings'][number],
    { instrument: string; qty: number; average_cost_cents: number }
  >,
  statementBreaks: true satisfies Equal<
    keyof Statement['breaks'][number],
    'instrument' | 'statement_qty' | 'expected_qty' | 'difference_qty'
  >,
  positionsList: true satisfies Equal<ListItem<'/v1/positions'>, Position>,
  getHasNoBody: true satisfies Equal<RequestBody<'/v1/orders/{id}', 'get'>, never>,
  cancelTakesNoMembers: true satisfies Equal<RequestBody<'/v1/orders/{id}/cancel', 'post'>, Record<string, never> | undefined>,
  pathParams: true satisfies Equal<PathParams<'/v1/audit/snapshots/{date}/proofs/{order_id}', 'get'>, { date: string; order_id: string }>,
  noQuery: true satisfies Equal<QueryParams<'/v1/orders/{id}', 'get'>, never>,
  listItem: true satisfies Equal<ListItem<'/v1/orders'>, Order>,
  // The operations' bodies are the named schemas themselves.
  orderNamed: true satisfies Equal<ResponseBody<'/v1/orders/{id}', 'get'>, components['schemas']['Order']>,
  fillNamed: true satisfies Equal<ListItem<'/v1/orders/{id}/fills'>, components['schemas']['Fill']>,
  attestationNamed: true satisfies Equal<ResponseBody<'/v1/kyc/attestations', 'post'>, Attestation>,
  requestNamed: true satisfies Equal<RequestBody<'/v1/orders', 'post'>, OrderRequest>,
  errorNamed: true satisfies Equal<ErrorBody['code'], string>,
  failureReasonNullable: true satisfies Equal<
    Order['failure_reason'],
    'sgi_rejected' | 'insufficient_funds' | 'instrument_suspended' | null
  >,
  partnersItem: true satisfies Equal<ListItem<'/v1/sgi/partners'>, Partner>,
  deleteIs204: true satisfies Equal<ResponseBody<'/v1/webhooks/endpoints/{id}', 'delete'>, undefined>,
  tokenType: true satisfies Equal<TokenResponse['token_type'], 'Bearer'>,
  attestationLevel: true satisfies Equal<Attestation['level'], 'KYC1' | 'KYC2' | 'KYC3'>,
  eventLivemode: true satisfies Equal<Event['livemode'], boolean>,
  // A delivered event is typed by its type: the union's members narrow `data`.
  eventTypes: true satisfies Equal<EventType, Event['type']>,
  executedData: true satisfies Equal<Extract<WebhookEvent, { type: 'order.executed' }>['data']['fill_qty'], number>,
  revokedData: true satisfies Equal<EventOf<'kyc.revoked'>['data']['reason'] extends string | null ? true : false, true>,
  createdIsOrder: true satisfies Extract<WebhookEvent, { type: 'order.created' }>['data'] extends Order ? true : false,
  lists: true satisfies Extract<'/v1/orders' | '/v1/sgi/partners' | '/v1/events', ListPath> extends never ? false : true,
};
// @ts-expect-error an unknown filter is refused
const badFilter: ListQuery<'/v1/orders'> = { colour: 'red' };
const goodFilter: ListQuery<'/v1/orders'> = { status: 'filled', limit: 3 };

/** Never called: the generic `request()` is checked against the generated paths at compile time. */
export async function requestIsTyped(client: CauriClient): Promise<unknown[]> {
  const health = await client.request('get', '/healthz', { auth: false });
  const order = await client.request('get', '/v1/orders/{id}', { path: { id: 'ord_x' } });
  const page = await client.exchange('get', '/v1/orders', { query: { status: 'filled' } });
  // @ts-expect-error path parameters are required
  await client.request('get', '/v1/orders/{id}');
  // @ts-expect-error the path has no DELETE
  await client.request('delete', '/v1/orders');
  // @ts-expect-error the body is checked
  await client.request('post', '/v1/orders', { body: { qty: 'ten' } });
  return [health.status, order.status satisfies Order['status'], page.headers.get('x-cursor-next'), page.body.data[0]?.qty];
}

test('the SDK types are views of the generated OpenAPI types', () => {
  assert.ok(Object.values(checks).every((v) => v));
  assert.ok(badFilter !== goodFilter);
});
