import { cursorFrom, Paginator, type Page } from './pagination.js';
import type {
  AmendRequest,
  ApiPath,
  Attestation,
  AttestationRequest,
  AttestationStatus,
  AuditSnapshot,
  AuthorizationServerMetadata,
  ClientSecretRotation,
  ClientSecretRotationRequest,
  FixSession,
  CalendarDay,
  CalendarQuery,
  Event,
  EventResend,
  EventResendRequest,
  Exchange,
  ExchangeClock,
  ExchangeCode,
  ContractNote,
  Fill,
  Instrument,
  InvestorAccount,
  IssuerKeyDocument,
  JsonWebKeySet,
  Readiness,
  ListItem,
  ListPath,
  ListQuery,
  MethodOf,
  Order,
  Position,
  Statement,
  StatementRequest,
  TestClock,
  OrderRequest,
  Partner,
  PathParams,
  QueryParams,
  RequestBody,
  ResponseBody,
  Revocation,
  RevocationList,
  RevokeRequest,
  SampleEvent,
  SnapshotProof,
  TokenResponse,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointRequest,
  WebhookEndpointUpdate,
  WebhookReplayDead,
  WebhookSecretRotation,
  WebhookTestEvent,
  WebhookTestRequest,
  WebhookEvent,
} from './types.js';
import { fillPath, type CauriClientOptions, type CallOptions, type ListOptions, type RequestOptions, type ApiResponse } from './request.js';

import { Transport } from './transport.js';
import { followEvents, type EventStreamOptions } from './event-stream.js';

export type { ApiResponse, CallOptions, CauriClientOptions, ListOptions, RequestOptions } from './request.js';

/**
 * A client of the cauri API. One instance per set of credentials; it is safe to share between
 * concurrent calls (they share one access token and one refresh).
 *
 * - Access tokens (client credentials, 15 minutes) are fetched on first use, refreshed shortly before
 *   they expire, and once more when a call is answered 401.
 * - Every mutating POST carries an `Idempotency-Key` (a fresh UUID unless given), and every retry of
 *   that call carries the same key, so a retried create never creates twice.
 * - 408, 429, 500, 502-504, a 409 with Retry-After, and network errors are retried: after `Retry-After`
 *   when the response has one, otherwise after an exponential backoff with jitter; at most
 *   `retry.maxAttempts` attempts.
 * - Non-2xx answers throw `CauriApiError`; no answer at all throws `CauriNetworkError`.
 */
export class CauriClient {
  readonly #transport: Transport;
  #serviceName: string | undefined;

  constructor(options: CauriClientOptions) {
    this.#transport = new Transport(options);
    this.#serviceName = options.serviceName;
  }

  /**
   * One call to any operation of the API, typed from the generated `paths`: the path parameters,
   * query, body and result all come from the service's OpenAPI document.
   */
  async request<P extends ApiPath, M extends MethodOf<P>>(
    method: M,
    path: P,
    // biome-ignore lint/complexity/noBannedTypes: `{} extends T` asks whether every member of T is optional.
    ...[options]: {} extends RequestOptions<P, M> ? [RequestOptions<P, M>?] : [RequestOptions<P, M>]
  ): Promise<ResponseBody<P, M>> {
    return (await this.exchange(method, path, options as RequestOptions<P, M>)).body;
  }

  /** As `request`, with the status and headers of the response. */
  async exchange<P extends ApiPath, M extends MethodOf<P>>(
    method: M,
    path: P,
    options: RequestOptions<P, M> = {} as RequestOptions<P, M>,
  ): Promise<ApiResponse<ResponseBody<P, M>>> {
    const o = options as CallOptions & { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown; auth?: boolean };
    const response = await this.#transport.send(method.toUpperCase(), path, fillPath(path, o.path), o.query, o.body, o.auth !== false, o);
    return response as ApiResponse<ResponseBody<P, M>>;
  }

  /**
   * Iterates a list operation across its pages (`X-Cursor-Next`), `limit` items per request. `path`
   * fills the parameters of a list under a resource (`{ subject_id }` for a subject's accounts);
   * `signal` aborts the page being fetched and ends the iteration.
   */
  paginate<P extends ListPath>(
    path: P,
    query: ListQuery<P> = {} as ListQuery<P>,
    options: ListOptions & { auth?: boolean; path?: PathParams<P, 'get' & MethodOf<P>> } = {},
  ): Paginator<ListItem<P>> {
    const url = fillPath(path, options.path as Record<string, unknown> | undefined);
    return new Paginator(async (cursor): Promise<Page<ListItem<P>>> => {
      const q = { ...(query as Record<string, unknown>), ...(cursor === undefined ? {} : { cursor }) };
      const { body, headers } = await this.#transport.send('GET', path, url, q, undefined, options.auth !== false, options);
      return {
        data: (body as { data: ListItem<P>[] }).data,
        nextCursor: cursorFrom(headers.get('x-cursor-next')),
        prevCursor: cursorFrom(headers.get('x-cursor-prev')),
      };
    });
  }

  readonly auth = {
    /** Exchanges the credentials for a new access token (the client also keeps it for its calls). */
    token: async (): Promise<TokenResponse> => {
      const { token, held } = await this.#transport.fetchToken();
      this.#transport.hold(held);
      return token;
    },
    /**
     * Rotates this client's own secret (a token with every scope the client may have). The client
     * exchanges the new secret from then on; the old one works 24 h more, or stops now with
     * `{ expire_previous: 'now' }`. Keep `client_secret`: it is shown only in this answer.
     */
    rotateSecret: async (body: ClientSecretRotationRequest = {}, options?: CallOptions): Promise<ClientSecretRotation> => {
      const rotated = await this.request('post', '/v1/auth/rotate-secret', { body, ...options });
      this.#transport.useSecret(rotated.client_secret);
      return rotated;
    },
    /** The public keys that verify access tokens (`/.well-known/jwks.json`). Public. */
    keys: (options?: CallOptions): Promise<JsonWebKeySet> => this.request('get', '/.well-known/jwks.json', { auth: false, ...options }),
    /** OAuth 2.0 authorization server metadata (RFC 8414). Public. */
    metadata: (options?: CallOptions): Promise<AuthorizationServerMetadata> =>
      this.request('get', '/.well-known/oauth-authorization-server', { auth: false, ...options }),
  };

  /** The deployment itself: its description, liveness, readiness and metrics. Public. */
  readonly service = {
    /** The OpenAPI 3.1 document this client's types come from. */
    openapi: (options?: CallOptions): Promise<Record<string, unknown>> =>
      this.request('get', '/v1/openapi.json', { auth: false, ...options }),
    health: (options?: CallOptions): Promise<{ status: 'ok' }> => this.request('get', '/healthz', { auth: false, ...options }),
    /** `ready`, `degraded` (with `reason`), or `unavailable` (the service's 503, returned rather than thrown). */
    readiness: async (options?: CallOptions): Promise<Readiness> =>
      (await this.#transport.send('GET', '/readyz', '/readyz', undefined, undefined, false, { ...options, statuses: [503] }))
        .body as Readiness,
    /** The Prometheus text exposition. */
    metrics: async (options?: CallOptions): Promise<string> =>
      (await this.#transport.send('GET', '/metrics', '/metrics', undefined, undefined, false, { ...options, accept: 'text/plain' }))
        .body as string,
  };

  readonly partners = {
    list: (query?: ListQuery<'/v1/sgi/partners'>, options?: ListOptions): Paginator<Partner> =>
      this.paginate('/v1/sgi/partners', query, { ...options, auth: false }),
    get: (id: string, options?: CallOptions): Promise<Partner> =>
      this.request('get', '/v1/sgi/partners/{id}', { path: { id }, auth: false, ...options }),
  };

  readonly instruments = {
    list: (query?: ListQuery<'/v1/instruments'>, options?: ListOptions): Paginator<Instrument> =>
      this.paginate('/v1/instruments', query, { ...options, auth: false }),
    get: (code: string, options?: CallOptions): Promise<Instrument> =>
      this.request('get', '/v1/instruments/{code}', { path: { code }, auth: false, ...options }),
  };

  readonly exchanges = {
    /** BRVM, BVMAC and GSE, with their currency and settlement cycle. Public. */
    list: async (options?: CallOptions): Promise<Exchange[]> =>
      (await this.request('get', '/v1/exchanges', { auth: false, ...options })).data,
    /** Each day from `from` to `to` (YYYY-MM-DD, both included, at most 366 days), open or not, with its phases. Public. */
    calendar: async (code: ExchangeCode, query?: CalendarQuery, options?: CallOptions): Promise<CalendarDay[]> =>
      (
        await this.request('get', '/v1/exchanges/{code}/calendar', {
          path: { code },
          ...(query === undefined ? {} : { query }),
          auth: false,
          ...options,
        })
      ).data,
    /** The exchange's phase now, whether it is open, and its next open and close. Public. */
    clock: (code: ExchangeCode, options?: CallOptions): Promise<ExchangeClock> =>
      this.request('get', '/v1/exchanges/{code}/clock', { path: { code }, auth: false, ...options }),
  };

  readonly attestations = {
    create: (body: AttestationRequest, options?: CallOptions): Promise<Attestation> =>
      this.request('post', '/v1/kyc/attestations', { body, ...options }),
    get: (id: string, options?: CallOptions): Promise<Attestation> =>
      this.request('get', '/v1/kyc/attestations/{id}', { path: { id }, ...options }),
    status: (id: string, options?: CallOptions): Promise<AttestationStatus> =>
      this.request('get', '/v1/kyc/attestations/{id}/status', { path: { id }, ...options }),
    revoke: (id: string, body: RevokeRequest = {}, options?: CallOptions): Promise<Revocation> =>
      this.request('post', '/v1/kyc/attestations/{id}/revoke', { path: { id }, body, ...options }),
    /** The signed revocation list; `since` gives the delta after that `crl_number`. Public. */
    crl: (query?: QueryParams<'/v1/kyc/crl', 'get'>, options?: CallOptions): Promise<RevocationList> =>
      this.request('get', '/v1/kyc/crl', { ...(query === undefined ? {} : { query }), auth: false, ...options }) as Promise<RevocationList>,
    /** The issuer key document (`/.well-known/<service name>`, see `serviceName`). Public. */
    keyDocument: async (options: CallOptions = {}): Promise<IssuerKeyDocument> => {
      this.#serviceName ??= (await this.attestations.crl(undefined, options)).issuer;
      const path = `/.well-known/${encodeURIComponent(this.#serviceName)}`;
      return (await this.#transport.send('GET', path, path, undefined, undefined, false, options)).body as IssuerKeyDocument;
    },
  };

  readonly orders = {
    create: (body: OrderRequest, options?: CallOptions): Promise<Order> => this.request('post', '/v1/orders', { body, ...options }),
    get: (id: string, options?: CallOptions): Promise<Order> => this.request('get', '/v1/orders/{id}', { path: { id }, ...options }),
    /** Newest first. */
    list: (query?: ListQuery<'/v1/orders'>, options?: ListOptions): Paginator<Order> => this.paginate('/v1/orders', query, options),
    /**
     * The order as the partner left it when it answered within the request (`cancelled`, or with
     * `last_refusal`); otherwise with `pending_request: 'pending_cancel'`, and `order.cancelled`
     * follows. A final order is a 409.
     */
    cancel: (id: string, options?: CallOptions): Promise<Order> =>
      this.request('post', '/v1/orders/{id}/cancel', { path: { id }, body: {}, ...options }),
    /**
     * A new `qty`, `limit_price_cents` or both for an open limit order. The order with its new values
     * (or with `last_refusal`) when the partner answered within the request; otherwise with
     * `pending_request: 'pending_amend'` and `pending_changes`, and `order.amended` follows.
     */
    amend: (id: string, body: AmendRequest, options?: CallOptions): Promise<Order> =>
      this.request('post', '/v1/orders/{id}/amend', { path: { id }, body, ...options }),
    /** The order's executions, oldest first, each with its fees, net amount and settlement. */
    fills: async (id: string, options?: CallOptions): Promise<Fill[]> =>
      (await this.request('get', '/v1/orders/{id}/fills', { path: { id }, ...options })).data,
    /** The trade confirmation of an order with fills (409 while it has none). */
    contractNote: (id: string, options?: CallOptions): Promise<ContractNote> =>
      this.request('get', '/v1/orders/{id}/contract-note', { path: { id }, ...options }),
    /**
     * The same note as a PDF document: its bytes. In French (an avis d'opéré) for BRVM and BVMAC
     * partners and in English for GSE partners, unless `lang` names the language.
     */
    contractNotePdf: async (id: string, options: CallOptions & { lang?: 'en' | 'fr' } = {}): Promise<Uint8Array> => {
      const path = '/v1/orders/{id}/contract-note';
      const { lang, ...rest } = options;
      const query = lang === undefined ? undefined : { lang };
      const { body } = await this.#transport.send('GET', path, fillPath(path, { id }), query, undefined, true, {
        ...rest,
        accept: 'application/pdf',
      });
      if (!(body instanceof Uint8Array)) throw new TypeError(`GET ${path} did not answer with a PDF`);
      return body;
    },
  };

  /**
   * Investors' account numbers at the SGIs, per subject and partner: an order to a partner carries
   * the subject's account there (FIX Account, tag 1), fixed when the order is accepted.
   */
  readonly accounts = {
    /** Registers the account number, or replaces the one registered (PUT: safe to repeat). */
    set: (subjectId: string, partnerId: string, accountNumber: string, options?: CallOptions): Promise<InvestorAccount> =>
      this.request('put', '/v1/subjects/{subject_id}/accounts/{partner_id}', {
        path: { subject_id: subjectId, partner_id: partnerId },
        body: { account_number: accountNumber },
        ...options,
      }),
    get: (subjectId: string, partnerId: string, options?: CallOptions): Promise<InvestorAccount> =>
      this.request('get', '/v1/subjects/{subject_id}/accounts/{partner_id}', {
        path: { subject_id: subjectId, partner_id: partnerId },
        ...options,
      }),
    /** The subject's accounts, ordered by partner id. */
    list: (subjectId: string, query?: ListQuery<'/v1/subjects/{subject_id}/accounts'>, options?: ListOptions): Paginator<InvestorAccount> =>
      this.paginate('/v1/subjects/{subject_id}/accounts', query, { ...options, path: { subject_id: subjectId } }),
    /** Orders already placed keep their account. A 404 when none is registered. */
    remove: async (subjectId: string, partnerId: string, options?: CallOptions): Promise<void> => {
      await this.request('delete', '/v1/subjects/{subject_id}/accounts/{partner_id}', {
        path: { subject_id: subjectId, partner_id: partnerId },
        ...options,
      });
    },
  };

  /**
   * Investors' positions per subject, partner and instrument, from the fills and the statements of
   * holdings declared from the SGIs (amounts in cents of each position's `currency`).
   */
  readonly positions = {
    /** In key order (subject, partner, instrument); filter by `subject_id`, `rcpt_to`, `instrument`. */
    list: (query?: ListQuery<'/v1/positions'>, options?: ListOptions): Paginator<Position> =>
      this.paginate('/v1/positions', query, options),
    statements: {
      /**
       * Declares the subject's settled holdings at the partner at the end of `as_of`: the positions
       * start again from it, and `breaks` lists where it disagrees with the fills (each statement
       * with breaks also emits `position.break`).
       */
      create: (body: StatementRequest, options?: CallOptions): Promise<Statement> =>
        this.request('post', '/v1/positions/statements', { body, ...options }),
      get: (id: string, options?: CallOptions): Promise<Statement> =>
        this.request('get', '/v1/positions/statements/{id}', { path: { id }, ...options }),
      /** Newest first. */
      list: (query?: ListQuery<'/v1/positions/statements'>, options?: ListOptions): Paginator<Statement> =>
        this.paginate('/v1/positions/statements', query, options),
    },
  };

  /** Sandbox only (404 in production): clocks that orders placed with `test_clock` live on. */
  readonly testClocks = {
    create: (body: RequestBody<'/v1/test-clocks', 'post'>, options?: CallOptions): Promise<TestClock> =>
      this.request('post', '/v1/test-clocks', { body, ...options }),
    get: (id: string, options?: CallOptions): Promise<TestClock> =>
      this.request('get', '/v1/test-clocks/{id}', { path: { id }, ...options }),
    /** Newest first. */
    list: (query?: ListQuery<'/v1/test-clocks'>, options?: ListOptions): Paginator<TestClock> =>
      this.paginate('/v1/test-clocks', query, options),
    delete: (id: string, options?: CallOptions): Promise<{ id: string; deleted: true }> =>
      this.request('delete', '/v1/test-clocks/{id}', { path: { id }, ...options }),
    /** Forward only; answers once everything due to the clock's orders up to `frozen_time` is applied. */
    advance: (id: string, frozenTime: string, options?: CallOptions): Promise<TestClock> =>
      this.request('post', '/v1/test-clocks/{id}/advance', { path: { id }, body: { frozen_time: frozenTime }, ...options }),
  };

  readonly webhooks = {
    endpoints: {
      /** The response is the only one that shows `secret`. */
      create: (body: WebhookEndpointRequest, options?: CallOptions): Promise<WebhookEndpointCreated> =>
        this.request('post', '/v1/webhooks/endpoints', { body, ...options }),
      list: (query?: ListQuery<'/v1/webhooks/endpoints'>, options?: ListOptions): Paginator<WebhookEndpoint> =>
        this.paginate('/v1/webhooks/endpoints', query, options),
      get: (id: string, options?: CallOptions): Promise<WebhookEndpoint> =>
        this.request('get', '/v1/webhooks/endpoints/{id}', { path: { id }, ...options }),
      update: (id: string, body: WebhookEndpointUpdate, options?: CallOptions): Promise<WebhookEndpoint> =>
        this.request('patch', '/v1/webhooks/endpoints/{id}', { path: { id }, body, ...options }),
      delete: async (id: string, options?: CallOptions): Promise<void> => {
        await this.request('delete', '/v1/webhooks/endpoints/{id}', { path: { id }, ...options });
      },
      rotateSecret: (id: string, options?: CallOptions): Promise<WebhookSecretRotation> =>
        this.request('post', '/v1/webhooks/endpoints/{id}/rotate-secret', { path: { id }, body: {}, ...options }),
      test: (id: string, body: WebhookTestRequest = {}, options?: CallOptions): Promise<WebhookTestEvent> =>
        this.request('post', '/v1/webhooks/endpoints/{id}/test', { path: { id }, body, ...options }),
      replayDead: (id: string, options?: CallOptions): Promise<WebhookReplayDead> =>
        this.request('post', '/v1/webhooks/endpoints/{id}/replay-dead', { path: { id }, body: {}, ...options }),
    },
    deliveries: {
      /** Newest first; `status: 'dead'` lists the dead letters. */
      list: (query?: ListQuery<'/v1/webhooks/deliveries'>, options?: ListOptions): Paginator<WebhookDelivery> =>
        this.paginate('/v1/webhooks/deliveries', query, options),
      get: (id: string, options?: CallOptions): Promise<WebhookDelivery> =>
        this.request('get', '/v1/webhooks/deliveries/{id}', { path: { id }, ...options }),
      replay: (id: string, options?: CallOptions): Promise<WebhookDelivery> =>
        this.request('post', '/v1/webhooks/deliveries/{id}/replay', { path: { id }, body: {}, ...options }),
    },
  };

  readonly events = {
    list: (query?: ListQuery<'/v1/events'>, options?: ListOptions): Paginator<Event> => this.paginate('/v1/events', query, options),
    get: (id: string, options?: CallOptions): Promise<Event> => this.request('get', '/v1/events/{id}', { path: { id }, ...options }),
    /** Stores a sample event of any type (default `webhook.test`): delivered to the subscribed endpoints and streamed. */
    test: (body: WebhookTestRequest = {}, options?: CallOptions): Promise<SampleEvent> =>
      this.request('post', '/v1/events/test', { body, ...options }),
    /** Sends a stored event again, to one endpoint (`endpoint_id`) or to every endpoint subscribed to its type. */
    resend: (id: string, body: EventResendRequest = {}, options?: CallOptions): Promise<EventResend> =>
      this.request('post', '/v1/events/{id}/resend', { path: { id }, body, ...options }),
    /** The client's events as they happen (`GET /v1/events/stream`), reconnecting and resuming by itself. */
    stream: (options?: EventStreamOptions): AsyncGenerator<WebhookEvent, void, undefined> => followEvents(this.#transport, options),
  };

  readonly audit = {
    /** The signed snapshot of a UTC day (`YYYY-MM-DD`); 404 until it is built and anchored. */
    snapshot: (date: string, options?: CallOptions): Promise<AuditSnapshot> =>
      this.request('get', '/v1/audit/snapshots/{date}', { path: { date }, ...options }),
    /** The inclusion proof of one of this client's orders in that day's tree. */
    proof: (date: string, orderId: string, options?: CallOptions): Promise<SnapshotProof> =>
      this.request('get', '/v1/audit/snapshots/{date}/proofs/{order_id}', { path: { date, order_id: orderId }, ...options }),
  };

  /** The deployment's operators' views: a client created with the scope `operator:read`. */
  readonly operator = {
    /** Each FIX partner's session: state, sequence numbers in and out, last logon and message times. */
    fixSessions: async (options?: CallOptions): Promise<FixSession[]> =>
      (await this.request('get', '/v1/operator/fix-sessions', options ?? {})).data,
  };
}
