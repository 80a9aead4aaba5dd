import { createHash, randomBytes } from 'node:crypto';

/**
 * Typed, prefixed identifiers in the TypeID format: `<prefix>_<suffix>`, where the suffix is a
 * UUIDv7 (RFC 9562 §5.7) written as 26 lowercase Crockford base32 characters. UUIDv7 starts with
 * the Unix time in milliseconds, so identifiers sort by creation time both as strings and as bytes.
 */
export const ID_PREFIXES = {
  client: 'cli',
  attestation: 'att',
  order: 'ord',
  partner: 'sgi',
  webhookEndpoint: 'we',
  event: 'evt',
  request: 'req',
  delivery: 'del',
  signingKey: 'key',
  fill: 'fil',
  testClock: 'clk',
  statement: 'stm',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

declare const brand: unique symbol;
/** A string known to be an identifier of one kind: an order id cannot be passed as an attestation id. */
export type Id<P extends IdPrefix> = string & { readonly [brand]: P };

export type ClientId = Id<'cli'>;
export type AttestationId = Id<'att'>;
export type OrderId = Id<'ord'>;
export type PartnerId = Id<'sgi'>;
export type WebhookEndpointId = Id<'we'>;
export type EventId = Id<'evt'>;
export type RequestId = Id<'req'>;
export type DeliveryId = Id<'del'>;
export type SigningKeyId = Id<'key'>;
export type FillId = Id<'fil'>;
export type TestClockId = Id<'clk'>;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SUFFIX = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

const ALPHABET_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

/**
 * 128 bits as 26 base32 digits, written as character codes into `out` from `at`: the 130-bit field
 * has two leading zero bits (TypeID spec). Bits are taken five at a time from an accumulator that
 * never holds more than 12 of them.
 */
function encodeUuidInto(bytes: Uint8Array, out: number[], at: number): void {
  let acc = 0;
  let bits = 2;
  let o = at;
  for (let i = 0; i < 16; i++) {
    acc = (acc << 8) | (bytes[i] as number);
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[o++] = ALPHABET_CODES[(acc >> bits) & 31] as number;
    }
    acc &= (1 << bits) - 1;
  }
}

// Identifiers are written as character codes and made into one string at once: appending 26
// characters one at a time built a chain of 26 string pieces, which every later use (a header
// check, a hash) had to flatten. Each prefix has its codes array, the prefix and '_' filled in.
const SUFFIX_CODES: number[] = new Array<number>(26).fill(0);
const TYPEID_CODES = new Map<string, number[]>();

/** 128 bits as 26 base32 digits (see encodeUuidInto). */
export function encodeUuid(bytes: Uint8Array): string {
  encodeUuidInto(bytes, SUFFIX_CODES, 0);
  return String.fromCharCode.apply(null, SUFFIX_CODES);
}

/** `<prefix>_<26 digits>`. */
function typeId(prefix: string, bytes: Uint8Array): string {
  let codes = TYPEID_CODES.get(prefix);
  if (codes === undefined) {
    codes = [...Array.from(prefix, (c) => c.charCodeAt(0)), 0x5f, ...SUFFIX_CODES];
    TYPEID_CODES.set(prefix, codes);
  }
  encodeUuidInto(bytes, codes, prefix.length + 1);
  return String.fromCharCode.apply(null, codes);
}

/**
 * The last counter value used in each recent millisecond. Ids are made for different times
 * interleaved (an event now, a fill at the partner's execution time), so the counter is kept per
 * millisecond, not only for the latest one: ids of one millisecond sort in creation order whatever
 * was made in between. Bounded: the oldest millisecond is forgotten first.
 */
const sequences = new Map<number, number>();
const REMEMBERED_MS = 1024;

// Random bytes come from a pool refilled 4 KiB at a time: one system call per 240 identifiers
// instead of two per identifier (ids are made on every request).
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;
/** The offset in `pool` of `n` random bytes not handed out before. */
function takeRandom(n: number): number {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  poolOffset += n;
  return poolOffset - n;
}

function randomSequenceStart(): number {
  return (pool[takeRandom(1)] as number) & 0x7f;
}

/**
 * A UUIDv7 whose 12-bit `rand_a` field is a counter within the millisecond (RFC 9562 §6.2,
 * method 1), so that ids made by one process in the same millisecond still sort in creation order.
 * An explicit earlier time (an injected clock) is kept as given rather than clamped.
 */
export function uuidv7Bytes(nowMs: number = Date.now()): Uint8Array {
  return uuidv7Into(new Uint8Array(16), nowMs);
}

function uuidv7Into(bytes: Uint8Array, nowMs: number): Uint8Array {
  let ms = nowMs;
  let last = sequences.get(ms);
  // 4096 ids in one millisecond: borrow the next one, as RFC 9562 §6.2 allows.
  while (last !== undefined && last >= 0xfff) last = sequences.get(++ms);
  const sequence = last === undefined ? randomSequenceStart() : last + 1;
  if (last === undefined && sequences.size >= REMEMBERED_MS) sequences.delete(sequences.keys().next().value as number);
  sequences.set(ms, sequence);
  // 48-bit big-endian milliseconds: the high 16 bits, then the low 32.
  const high = Math.floor(ms / 0x1_0000_0000);
  const low = ms >>> 0;
  bytes[0] = high >>> 8;
  bytes[1] = high & 0xff;
  bytes[2] = low >>> 24;
  bytes[3] = (low >>> 16) & 0xff;
  bytes[4] = (low >>> 8) & 0xff;
  bytes[5] = low & 0xff;
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  const at = takeRandom(8);
  for (let i = 0; i < 8; i++) bytes[8 + i] = pool[at + i] as number;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  return bytes;
}

const ID_BYTES = new Uint8Array(16);

export function newId<K extends IdKind>(kind: K, nowMs: number = Date.now()): Id<(typeof ID_PREFIXES)[K]> {
  return typeId(ID_PREFIXES[kind], uuidv7Into(ID_BYTES, nowMs)) as Id<(typeof ID_PREFIXES)[K]>;
}

/** True when `value` is a well-formed identifier of this kind; used before any lookup. */
export function isId<K extends IdKind>(kind: K, value: unknown): value is Id<(typeof ID_PREFIXES)[K]> {
  if (typeof value !== 'string') return false;
  const prefix = ID_PREFIXES[kind];
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && SUFFIX.test(value.slice(prefix.length + 1));
}

/**
 * A fixed identifier for seeded reference data (sandbox partners), so that documentation can name
 * them: a UUIDv7 at `ms` whose random bits come from SHA-256 of the kind and `label`.
 */
export function deterministicId<K extends IdKind>(kind: K, ms: number, label: string): Id<(typeof ID_PREFIXES)[K]> {
  const bytes = createHash('sha256').update(`${kind}:${label}`).digest().subarray(0, 16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  return typeId(ID_PREFIXES[kind], bytes) as Id<(typeof ID_PREFIXES)[K]>;
}

/**
 * How far an id's UUIDv7 time may run ahead of the time it was made for, as a margin for id bounds
 * computed from times: an id takes the next millisecond only when 4096 share one (see uuidv7Into),
 * so a minute is far more than any process reaches. Bounds widened by it are for index scans; the
 * stored time stays the condition that decides.
 */
export const ID_TIME_MARGIN_MS = 60_000;

/**
 * The lowest identifier of `kind` at millisecond `ms` (every other bit zero): at or below every id
 * whose UUIDv7 time is `ms` or later, and above every id of an earlier time. TypeID text sorts like
 * the UUID bytes, so a range of times is a range of ids, which an index on the id serves. `ms` is
 * clamped to the 48 bits a UUIDv7 holds.
 */
export function idFloorAt<K extends IdKind>(kind: K, ms: number): Id<(typeof ID_PREFIXES)[K]> {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Math.min(Math.max(Math.floor(ms), 0), 2 ** 48 - 1), 0, 6);
  return typeId(ID_PREFIXES[kind], bytes) as Id<(typeof ID_PREFIXES)[K]>;
}
