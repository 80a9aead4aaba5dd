import type { components, paths, webhooks } from './generated/openapi.js';

/**
 * Request and response types, all taken from the generated `paths` and `components`
 * (src/generated/openapi.ts, made from the service's own OpenAPI document). Nothing here restates a
 * field: when the service's schemas change, regenerating the file changes these types.
 */

export type { components, paths, webhooks } from './generated/openapi.js';

export type ApiPath = keyof paths;
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The methods a path has (openapi-typescript writes `get?: never` for the others). */
export type MethodOf<P extends ApiPath> = { [M in HttpMethod]: [paths[P][M]] extends [undefined] ? never : M }[HttpMethod];

export type Operation<P extends ApiPath, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer X } ? X : never;

/** `{ id: string }` for `/v1/orders/{id}`; never for a path without parameters. */
export type PathParams<P extends ApiPath, M extends MethodOf<P>> =
  ParametersOf<Operation<P, M>> extends { path?: infer X } ? NonNullable<X> : never;

/**
 * Query parameters. Every member is optional here: the document marks `limit` required only because
 * it has a default (a quirk of the schema-to-OpenAPI conversion), and no query parameter of the API is
 * required.
 */
export type QueryParams<P extends ApiPath, M extends MethodOf<P>> =
  ParametersOf<Operation<P, M>> extends { query?: infer X } ? ([NonNullable<X>] extends [never] ? never : Partial<NonNullable<X>>) : never;

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
export type ResponseBody<P extends ApiPath, M extends MethodOf<P>> = JsonContent<
  ResponsesOf<Operation<P, M>>[Extract<keyof ResponsesOf<Operation<P, M>>, SuccessStatus>]
>;

/** Paths whose GET returns `{ data: [...] }` and pages with `X-Cursor-Next`. */
export type ListPath = {
  [P in ApiPath]: 'get' extends MethodOf<P>
    ? ResponseBody<P, 'get' & MethodOf<P>> extends { data: readonly unknown[] }
      ? P
      : never
    : never;
}[ApiPath];

export type ListItem<P extends ListPath> = ResponseBody<P, 'get' & MethodOf<P>> extends { data: readonly (infer T)[] } ? T : never;

/** Filters of a list, without the paging parameters the iterator manages. */
export type ListQuery<P extends ListPath> = Omit<QueryParams<P, 'get' & MethodOf<P>>, 'cursor'>;

/** The document's named schemas (`components.schemas`): one type per resource and request body. */
export type Schemas = components['schemas'];

// Names for the resources, for signatures in the caller's code: the document's named schemas, under
// the names the SDK has always used where they differ (`Partner` is `SgiPartner`, `Attestation` is
// `KycAttestation`).
export type TokenResponse = Schemas['TokenResponse'];
export type AuthorizationServerMetadata = Schemas['AuthorizationServerMetadata'];
export type JsonWebKeySet = Schemas['JsonWebKeySet'];
export type ClientSecretRotationRequest = Schemas['ClientSecretRotationRequest'];
export type ClientSecretRotation = Schemas['ClientSecretRotation'];
/** `GET /readyz`: ready, degraded (still serving) or unavailable (its 503). */
export type Readiness =
  | ResponseBody<'/readyz', 'get'>
  | NonNullable<paths['/readyz']['get']>['responses'][503]['content']['application/json'];
export type Partner = Schemas['SgiPartner'];
export type Instrument = Schemas['Instrument'];
export type Exchange = Schemas['Exchange'];
export type ExchangeCode = Exchange['code'];
export type CalendarDay = Schemas['CalendarDay'];
export type CalendarPhase = Schemas['CalendarPhase'];
export type CalendarQuery = QueryParams<'/v1/exchanges/{code}/calendar', 'get'>;
export type ExchangeClock = Schemas['ExchangeClock'];
export type AttestationRequest = Schemas['KycAttestationRequest'];
export type KycVerification = Schemas['KycVerification'];
export type Attestation = Schemas['KycAttestation'];
export type AttestationStatus = Schemas['AttestationStatus'];
export type RevokeRequest = Schemas['RevokeRequest'];
export type Revocation = Schemas['Revocation'];
export type RevocationList = Schemas['RevocationList'];
export type IssuerKeyDocument = Schemas['IssuerKeyDocument'];
export type OrderRequest = Schemas['OrderRequest'];
export type Order = Schemas['Order'];
export type TestClock = Schemas['TestClock'];
export type OrderListQuery = ListQuery<'/v1/orders'>;
export type AmendRequest = Schemas['AmendRequest'];
export type Fill = Schemas['Fill'];
export type AuditSnapshot = Schemas['AuditSnapshot'];
export type SnapshotAnchor = Schemas['SnapshotAnchor'];
export type SnapshotProof = Schemas['SnapshotProof'];
export type WebhookEndpointRequest = Schemas['WebhookEndpointRequest'];
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointUpdate = Schemas['WebhookEndpointUpdate'];
export type WebhookSecretRotation = Schemas['WebhookSecretRotation'];
export type WebhookTestRequest = Schemas['WebhookTestEventRequest'];
export type WebhookTestEvent = Schemas['WebhookTestEvent'];
export type WebhookReplayDead = Schemas['WebhookReplayDead'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt'];
export type Event = Schemas['Event'];
export type SampleEvent = Schemas['SampleEvent'];
export type EventResendRequest = Schemas['EventResendRequest'];
export type EventResend = Schemas['EventResend'];
/** The event types, as the document's `webhooks` section names them. */
export type EventType = keyof webhooks;
/** The body a delivery of event type `T` carries: the envelope with that type's `data`. */
export type EventOf<T extends EventType> = webhooks[T]['post']['requestBody']['content']['application/json'];
/** A delivered event, typed by its `type`: narrowing on `event.type` types its `data`. */
export type WebhookEvent = { [T in EventType]: EventOf<T> }[EventType];
/** The body of every error response (CauriApiError carries it). */
export type ErrorBody = Schemas['Error'];
export type InvestorAccount = ResponseBody<'/v1/subjects/{subject_id}/accounts/{partner_id}', 'get'>;
export type Position = ListItem<'/v1/positions'>;
export type PositionListQuery = ListQuery<'/v1/positions'>;
export type StatementRequest = RequestBody<'/v1/positions/statements', 'post'>;
export type Statement = ResponseBody<'/v1/positions/statements/{id}', 'get'>;
export type PositionBreak = Statement['breaks'][number];
export type FixSession = ResponseBody<'/v1/operator/fix-sessions', 'get'>['data'][number];
export type ContractNote = ResponseBody<'/v1/orders/{id}/contract-note', 'get'>;
