import type { paths } from './generated/openapi.js';

/**
 * Request and response types, all derived from the generated `paths` (src/generated/openapi.ts, made
 * from the service's own OpenAPI document). Nothing here restates a field: when the service's schemas
 * change, regenerating the file changes these types.
 */

export type { paths } from './generated/openapi.js';

export type ApiPath = keyof paths;
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The methods a path has (openapi-typescript writes `get?: never` for the others). */
export type MethodOf<P extends ApiPath> = { [M in HttpMethod]: [paths[P][M]] extends [undefined] ? never : M }[HttpMethod];

export type Operation<P extends ApiPath, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer X } ? X : never;

/** `{ id: string }` for `/v1/orders/{id}`; never for a path without parameters. */
export type PathParams<P extends ApiPath, M extends MethodOf<P>> = ParametersOf<Operation<P, M>> extends { path?: infer X } ? NonNullable<X> : never;

/**
 * Query parameters. Every member is optional here: the document marks `limit` required only because
 * it has a default (a quirk of the schema-to-OpenAPI conversion), and no query parameter of the API is
 * required.
 */
export type QueryParams<P extends ApiPath, M extends MethodOf<P>> = ParametersOf<Operation<P, M>> extends { query?: infer X }
  ? [NonNullable<X>] extends [never]
    ? never
    : Partial<NonNullable<X>>
  : never;

/** The JSON body; never when the operation takes none, `| undefined` when it is optional. */
export type RequestBody<P extends ApiPath, M extends MethodOf<P>> = BodyOf<Operation<P, M>>;
type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: infer R }
    ? [NonNullable<R>] extends [never]
      ? never
      : NonNullable<R> extends { content: { 'application/json': infer B } }
        ? B | undefined
        : never
    : never;

type SuccessStatus = 200 | 201 | 202 | 204;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : R extends { content?: never } ? undefined : unknown;

/** The body of the 2xx response (undefined for 204). */
export type ResponseBody<P extends ApiPath, M extends MethodOf<P>> = JsonContent<ResponsesOf<Operation<P, M>>[Extract<keyof ResponsesOf<Operation<P, M>>, SuccessStatus>]>;

/** Paths whose GET returns `{ data: [...] }` and pages with `X-Cursor-Next`. */
export type ListPath = {
  [P in ApiPath]: 'get' extends MethodOf<P> ? (ResponseBody<P, 'get' & MethodOf<P>> extends { data: readonly unknown[] } ? P : never) : never;
}[ApiPath];

export type ListItem<P extends ListPath> = ResponseBody<P, 'get' & MethodOf<P>> extends { data: readonly (infer T)[] } ? T : never;

/** Filters of a list, without the paging parameters the iterator manages. */
export type ListQuery<P extends ListPath> = Omit<QueryParams<P, 'get' & MethodOf<P>>, 'cursor'>;

// Names for the resources, for signatures in the caller's code. Each is a view of `paths`.
export type TokenResponse = ResponseBody<'/v1/auth/token', 'post'>;
export type Partner = ResponseBody<'/v1/sgi/partners/{id}', 'get'>;
export type Instrument = ResponseBody<'/v1/instruments/{code}', 'get'>;
export type Exchange = ListItem<'/v1/exchanges'>;
export type ExchangeCode = Exchange['code'];
export type CalendarDay = ListItem<'/v1/exchanges/{code}/calendar'>;
export type CalendarQuery = QueryParams<'/v1/exchanges/{code}/calendar', 'get'>;
export type ExchangeClock = ResponseBody<'/v1/exchanges/{code}/clock', 'get'>;
export type AttestationRequest = RequestBody<'/v1/kyc/attestations', 'post'>;
export type Attestation = ResponseBody<'/v1/kyc/attestations/{id}', 'get'>;
export type AttestationStatus = ResponseBody<'/v1/kyc/attestations/{id}/status', 'get'>;
export type RevokeRequest = RequestBody<'/v1/kyc/attestations/{id}/revoke', 'post'>;
export type Revocation = ResponseBody<'/v1/kyc/attestations/{id}/revoke', 'post'>;
export type RevocationList = ResponseBody<'/v1/kyc/crl', 'get'>;
export type IssuerKeyDocument = ResponseBody<'/.well-known/cauri', 'get'>;
export type OrderRequest = RequestBody<'/v1/orders', 'post'>;
export type Order = ResponseBody<'/v1/orders/{id}', 'get'>;
export type TestClock = ResponseBody<'/v1/test-clocks/{id}', 'get'>;
export type OrderListQuery = ListQuery<'/v1/orders'>;
export type AmendRequest = RequestBody<'/v1/orders/{id}/amend', 'post'>;
export type Fill = ListItem<'/v1/orders/{id}/fills'>;
export type ContractNote = ResponseBody<'/v1/orders/{id}/contract-note', 'get'>;
export type AuditSnapshot = ResponseBody<'/v1/audit/snapshots/{date}', 'get'>;
export type SnapshotProof = ResponseBody<'/v1/audit/snapshots/{date}/proofs/{order_id}', 'get'>;
export type WebhookEndpointRequest = RequestBody<'/v1/webhooks/endpoints', 'post'>;
export type WebhookEndpointCreated = ResponseBody<'/v1/webhooks/endpoints', 'post'>;
export type WebhookEndpoint = ResponseBody<'/v1/webhooks/endpoints/{id}', 'get'>;
export type WebhookEndpointUpdate = RequestBody<'/v1/webhooks/endpoints/{id}', 'patch'>;
export type WebhookSecretRotation = ResponseBody<'/v1/webhooks/endpoints/{id}/rotate-secret', 'post'>;
export type WebhookTestRequest = RequestBody<'/v1/webhooks/endpoints/{id}/test', 'post'>;
export type WebhookTestEvent = ResponseBody<'/v1/webhooks/endpoints/{id}/test', 'post'>;
export type WebhookReplayDead = ResponseBody<'/v1/webhooks/endpoints/{id}/replay-dead', 'post'>;
export type WebhookDelivery = ResponseBody<'/v1/webhooks/deliveries/{id}', 'get'>;
export type Event = ResponseBody<'/v1/events/{id}', 'get'>;
