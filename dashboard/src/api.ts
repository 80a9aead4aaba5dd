/**
 * The dashboard's only way to the service: the public API, with the developer's access token. The
 * token lives in this module's memory only (never in localStorage, sessionStorage or a cookie), so
 * closing or reloading the tab signs out, and the client secret is forgotten as soon as it has been
 * exchanged.
 */

import type { MessageKey } from './i18n/en.js';

export interface ErrorDetail {
  field: string;
  rule: string;
  value?: unknown;
  message?: string;
}

/** An error response of the API (docs/errors.md), or a network failure (`status` 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
    readonly details: ErrorDetail[] = [],
    /** Values for the translation of an error of the dashboard itself (`error.<code>` of the catalogues). */
    readonly params: Record<string, string | number> = {},
  ) {
    super(message);
  }
}

export interface Session {
  clientId: string;
  scopes: string[];
  /** Browser time (ms) when the token expires. */
  expiresAt: number;
}

let token: string | null = null;
let session: Session | null = null;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
let onEnd: (reason: MessageKey | null) => void = () => {};

export function currentSession(): Session | null {
  return session;
}

/** Called when the session ends: signed out (reason null) or expired (the message key for the sign-in page). */
export function onSessionEnd(callback: (reason: MessageKey | null) => void): void {
  onEnd = callback;
}

export function signOut(reason: MessageKey | null = null): void {
  token = null;
  session = null;
  clearTimeout(expiryTimer);
  onEnd(reason);
}

/** A random UUID (version 4) for Idempotency-Key; `crypto.getRandomValues` works outside secure contexts too. */
export function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: { code?: string; message?: string; request_id?: string; details?: ErrorDetail[] } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // Not an API error body (a proxy's page): the status alone is reported.
  }
  return new ApiError(
    res.status,
    body.code ?? `http_${res.status}`,
    body.message ?? `HTTP ${res.status}`,
    body.request_id ?? res.headers.get('x-request-id'),
    body.details ?? [],
  );
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, { ...init, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network_error', 'The service could not be reached. Check your connection and try again.');
  }
}

/**
 * Exchanges client credentials for an access token (`POST /v1/auth/token`). On failure nothing is
 * kept and the error says why; a wrong id or secret is 401.
 */
export async function signIn(clientId: string, clientSecret: string): Promise<Session> {
  token = null;
  session = null;
  const res = await send('/v1/auth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  if (!res.ok) throw await errorOf(res);
  const body = (await res.json()) as { access_token: string; expires_in: number; scope: string };
  token = body.access_token;
  session = { clientId, scopes: body.scope.split(' ').filter((s) => s !== ''), expiresAt: Date.now() + body.expires_in * 1000 };
  clearTimeout(expiryTimer);
  expiryTimer = setTimeout(() => signOut('session.expired'), body.expires_in * 1000);
  return session;
}

export interface Result<T> {
  body: T;
  headers: Headers;
}

/**
 * One API call with the session's token. A 401 means the token expired or was revoked: the session
 * ends and the user is sent back to the sign-in page. POSTs carry a fresh Idempotency-Key.
 */
export async function call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Result<T>> {
  if (token === null) {
    signOut('session.required');
    throw new ApiError(401, 'unauthorized', 'Not signed in');
  }
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = uuid();
  const res = await send(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (res.status === 401) {
    signOut('session.expired');
    throw await errorOf(res);
  }
  if (!res.ok) throw await errorOf(res);
  return { body: (res.status === 204 ? null : await res.json()) as T, headers: res.headers };
}

/**
 * A document of the API in another type than JSON (a contract note as a PDF), with the session's
 * token: a link could not carry the token, which lives in memory only.
 */
export async function fetchDocument(path: string, accept: string): Promise<Blob> {
  if (token === null) {
    signOut('session.required');
    throw new ApiError(401, 'unauthorized', 'Not signed in');
  }
  const res = await send(path, { method: 'GET', headers: { authorization: `Bearer ${token}`, accept } });
  if (res.status === 401) {
    signOut('session.expired');
    throw await errorOf(res);
  }
  if (!res.ok) throw await errorOf(res);
  return res.blob();
}

/**
 * Follows the account's events as they happen (`GET /v1/events/stream`, Server-Sent Events), with
 * the session's token: EventSource cannot send one, so the stream is read with fetch. `onEvent` gets
 * each event's envelope. Resolves when `signal` aborts (`stopped`) or the service ends the stream
 * (`ended`: the token expired, or the connection dropped); a 401 ends the session as `call` does.
 */
export async function followEvents(signal: AbortSignal, onEvent: (event: EventEnvelope) => void): Promise<'stopped' | 'ended'> {
  if (token === null) {
    signOut('session.required');
    throw new ApiError(401, 'unauthorized', 'Not signed in');
  }
  let res: Response;
  try {
    res = await fetch('/v1/events/stream', {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      credentials: 'omit',
      cache: 'no-store',
      signal,
    });
  } catch (error) {
    if (signal.aborted) return 'stopped';
    throw new ApiError(0, 'stream_error', `The event stream could not be opened: ${String(error)}`);
  }
  if (res.status === 401) {
    signOut('session.expired');
    throw await errorOf(res);
  }
  if (!res.ok || res.body === null) throw await errorOf(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return signal.aborted ? 'stopped' : 'ended';
      buffer += value.replace(/\r\n?/g, '\n');
      // A frame ends with a blank line; its `data:` lines hold the envelope (one line of JSON).
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        buffer = buffer.slice(end + 2);
        if (data !== '') onEvent(JSON.parse(data) as EventEnvelope);
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (error) {
    if (signal.aborted) return 'stopped';
    throw error;
  }
}

/** A query string from the non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

// The API's resources, as far as the dashboard shows them.

export interface Order {
  id: string;
  status: string;
  rcpt_to: string;
  kyc_attestation_id?: string;
  instrument: string;
  /** XOF, XAF or GHS: the currency of every `_cents` amount of the order. */
  currency?: string;
  side: string;
  qty: number;
  limit_price_cents?: number | null;
  filled_qty?: number;
  average_fill_price_cents?: number | null;
  failure_reason?: string | null;
  client_metadata?: Record<string, unknown>;
  created_at: string;
  updated_at?: string;
  time_in_force?: string;
  expire_date?: string | null;
  expires_at?: string | null;
  cancel_reason?: string | null;
  pending_request?: 'pending_cancel' | 'pending_amend' | null;
  pending_changes?: { qty: number; limit_price_cents: number } | null;
  last_refusal?: { request: string; reason: string; refused_at: string } | null;
}

export interface Fill {
  id: string;
  order_id: string;
  qty: number;
  price_cents: number;
  executed_at: string;
  exchange_ref: string;
  gross_cents: number;
  fees: { type: string; amount_cents: number }[];
  net_cents: number;
  settlement_date: string;
  settlement_status: 'pending' | 'settled';
  fee_schedules: { scope: 'partner' | 'exchange'; id: string; effective_from: string }[];
}

export interface Position {
  subject_id: string;
  rcpt_to: string;
  instrument: string;
  /** XOF, XAF or GHS: the currency of every `_cents` amount of the position. */
  currency: string;
  qty: number;
  settled_qty: number;
  average_cost_cents: number | null;
  reference_price_cents: number | null;
  market_value_cents: number | null;
  unrealised_pnl_cents: number | null;
  realised_pnl_cents: number;
  statement_as_of: string | null;
  updated_at: string;
}

export interface PositionBreak {
  instrument: string;
  statement_qty: number;
  expected_qty: number;
  difference_qty: number;
}

export interface Statement {
  id: string;
  subject_id: string;
  rcpt_to: string;
  as_of: string;
  holdings: { instrument: string; qty: number; average_cost_cents: number }[];
  breaks: PositionBreak[];
  previous_statement_id: string | null;
  replaces: string | null;
  replaced_by: string | null;
  created_at: string;
}

export interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  livemode: boolean;
}

export interface Attestation {
  id: string;
  subject_id: string;
  level: string;
  issued_at: string;
  expires_at: string;
  issuer: string;
  jurisdictions: string[];
  verifications: { type: string; verified_at: string; method?: string }[];
  key_id: string;
}

export interface AttestationStatus {
  attestation_id: string;
  status: 'active' | 'revoked' | 'expired';
  revoked_at: string | null;
  reason: string | null;
}

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description?: string;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: 'pending' | 'succeeded' | 'dead' | 'cancelled';
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: Attempt[];
}

// The service's event types (src/events/event.types.ts), which the dashboard, built apart, repeats.
export const EVENT_TYPES = [
  'order.created',
  'order.routed',
  'order.executed',
  'order.failed',
  'order.cancelled',
  'order.amended',
  'order.request_refused',
  'position.break',
  'kyc.attested',
  'kyc.revoked',
  'audit.snapshot',
  'webhook.test',
] as const;
export const ORDER_STATUSES = ['created', 'routed', 'partially_filled', 'filled', 'failed', 'cancelled'] as const;
export const REVOCATION_REASONS = ['superseded', 'compromised', 'subject_request', 'other'] as const;
