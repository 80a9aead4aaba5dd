import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from '../lib/errors.js';

export type Direction = 'next' | 'prev';

export interface CursorPosition {
  /** The sort key of the last item seen, from which the page continues. */
  position: string;
  direction: Direction;
}

/**
 * Opaque page cursors: the position, the listing and its filters, authenticated with an HMAC so that
 * a cursor the service did not issue, or one taken from another listing or other filters, is refused
 * (422 on `cursor`) instead of silently paging something else.
 */
export class CursorCodec {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  encode(listing: string, filters: Record<string, unknown>, cursor: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([listing, filterKey(filters), cursor.direction, cursor.position])).toString('base64url');
    return `${payload}.${this.#mac(payload)}`;
  }

  /** The position in `token`, or a 422 naming `cursor` when the service did not issue it for this listing. */
  decode(token: string, listing: string, filters: Record<string, unknown>): CursorPosition {
    const reject = (why: string) => validationError([{ field: 'cursor', rule: 'cursor', value: token }], `Invalid cursor: ${why}`);
    const dot = token.indexOf('.');
    if (dot <= 0) throw reject('not a cursor issued by this service');
    const payload = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.#mac(payload), 'base64url');
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw reject('not a cursor issued by this service');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw reject('not a cursor issued by this service');
    }
    if (!Array.isArray(parsed) || parsed.length !== 4) throw reject('not a cursor issued by this service');
    const [kind, filterHash, direction, position] = parsed as unknown[];
    if (kind !== listing) throw reject('issued for another listing');
    if (filterHash !== filterKey(filters)) throw reject('issued for other filters; repeat the same filters while paging');
    if ((direction !== 'next' && direction !== 'prev') || typeof position !== 'string') throw reject('not a cursor issued by this service');
    return { position, direction };
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest().subarray(0, 16).toString('base64url');
  }
}

function filterKey(filters: Record<string, unknown>): string {
  return Object.keys(filters)
    .filter((k) => filters[k] !== undefined)
    .sort()
    .map((k) => `${k}=${String(filters[k])}`)
    .join('&');
}
