import { randomBytes } from 'node:crypto';

/**
 * Request correlation, pure: the caller's own request id and W3C Trace Context (Level 1,
 * https://www.w3.org/TR/trace-context/), as the service reads them from a request and writes them on
 * the webhook deliveries the request causes.
 */

/** A caller's `X-Request-Id` is kept when it is 1 to 128 characters of `[A-Za-z0-9._:-]` (the charset of `subject_id`). */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when well formed; anything else (absent, repeated, too long, other characters) is null. */
export function callerRequestId(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && CALLER_REQUEST_ID.test(value) ? value : null;
}

export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero: the caller's span. */
  parentId: string;
  /** 2 lowercase hex digits; bit 0 is `sampled`. */
  flags: string;
}

const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: its first four fields as in 00, and either nothing more or a `-` then more (spec §3.2.4). */
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The `traceparent` header, parsed as the specification says: version `00` exactly (55 characters,
 * lowercase hex); a later version by its first four fields; version `ff`, uppercase hex, all-zero
 * trace or parent ids, or a header sent twice (Node joins repeated headers with a comma, which no
 * valid value holds) are invalid, and an invalid header is ignored as if absent.
 */
export function parseTraceparent(value: string | string[] | undefined): TraceParent | null {
  if (typeof value !== 'string') return null;
  const header = value.trim();
  let fields: string[] | undefined;
  const current = VERSION_00.exec(header);
  if (current !== null) fields = current.slice(1, 4);
  else {
    const later = LATER_VERSION.exec(header);
    if (later !== null && later[1] !== '00' && later[1] !== 'ff') fields = later.slice(2, 5);
  }
  if (fields === undefined) return null;
  const [traceId = '', parentId = '', flags = ''] = fields;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  return { traceId, parentId, flags };
}

/** The header of a span: version 00. */
export function formatTraceparent(traceId: string, spanId: string, flags: string): string {
  return `00-${traceId}-${spanId}-${flags}`;
}

/**
 * `tracestate`, kept only with a valid `traceparent` (spec §3.3): at most 512 characters of printable
 * ASCII, at most 32 comma-separated members, each `key=value`. Anything else is dropped, never
 * passed on.
 */
export function parseTracestate(value: string | string[] | undefined): string | null {
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > 512 || !/^[\x20-\x7e]+$/.test(trimmed)) return null;
  const members = trimmed
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (members.length === 0 || members.length > 32) return null;
  if (!members.every((m) => /^[a-z0-9][_0-9a-z\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/.test(m)))
    return null;
  return members.join(',');
}

/** A new span id: 8 random bytes, never all zero. */
export function newSpanId(): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (id !== ZERO_SPAN) return id;
  }
}

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * The 128-bit UUID inside a TypeID (`req_01h...`, `evt_01h...`) as 32 hex digits. The service starts a
 * trace with it when nothing came from outside: the trace id of a request is then its request id, in
 * another spelling, and its span id the id's last 64 bits (the UUIDv7 variant bit makes them non-zero).
 */
export function uuidHexOfId(id: string): string {
  const suffix = id.slice(id.lastIndexOf('_') + 1);
  if (suffix.length !== 26) throw new RangeError(`not a TypeID: ${id}`);
  let hex = '';
  // 130 bits, the first two zero: read five bits a character, emit a byte whenever eight are held.
  let acc = 0;
  let bits = 0;
  let skip = 2;
  for (const char of suffix) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new RangeError(`not a TypeID: ${id}`);
    acc = (acc << 5) | value;
    bits += 5;
    if (skip > 0) {
      bits -= skip;
      acc &= (1 << bits) - 1;
      skip = 0;
    }
    if (bits >= 8) {
      bits -= 8;
      hex += ((acc >> bits) & 0xff).toString(16).padStart(2, '0');
      acc &= (1 << bits) - 1;
    }
  }
  return hex;
}

/** Where a request stands in a trace, and the ids it is known by. */
export interface RequestTrace {
  /** The service's request id (`req_...`): the response's X-Request-Id. */
  requestId: string;
  /** The caller's own X-Request-Id, when it sent a well-formed one. */
  clientRequestId: string | null;
  traceId: string;
  /** The service's span for this request. */
  spanId: string;
  /** The caller's span, when it sent a valid traceparent. */
  parentId: string | null;
  flags: string;
  tracestate: string | null;
}

/**
 * The trace context of a request from its headers. With a valid `traceparent` the request joins the
 * caller's trace (its flags kept); without one it starts a trace of its own, sampled, whose id is the
 * request id's UUID. Either way the service's span for the request is the request id's last 64 bits,
 * so a span id in a receiver's logs leads back to one request.
 */
export function requestTrace(requestId: string, headers: Readonly<Record<string, string | string[] | undefined>>): RequestTrace {
  const uuid = uuidHexOfId(requestId);
  const parent = parseTraceparent(headers.traceparent);
  return {
    requestId,
    clientRequestId: callerRequestId(headers['x-request-id']),
    traceId: parent?.traceId ?? uuid,
    spanId: uuid.slice(16),
    parentId: parent?.parentId ?? null,
    flags: parent?.flags ?? '01',
    tracestate: parent === null ? null : parseTracestate(headers.tracestate),
  };
}
