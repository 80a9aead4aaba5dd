import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply } from 'fastify';
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

/** The range a two-way listing (newest first) reads: `before` continues to older items, `after` goes back to newer ones. */
export interface KeysetRange {
  limit: number;
  before?: string;
  after?: string;
}

/**
 * The keyset paging of one listing request, the one way every listing pages: the position its
 * cursor names, checked against the listing and its filters (422 on `cursor` otherwise), and the
 * cursors of the page sent back in X-Cursor-Next and, for a two-way listing, X-Cursor-Prev (empty at
 * an end of the listing).
 */
export class KeysetPaging {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly listing: string,
    private readonly filters: Record<string, unknown>,
  ) {}

  /** The position after which the next page starts; null on the first page. */
  after(cursor: string | undefined): string | null {
    return cursor === undefined ? null : this.cursors.decode(cursor, this.listing, this.filters).position;
  }

  /** For a two-way listing: the range of the page `cursor` asks for. */
  range(cursor: string | undefined, limit: number): KeysetRange {
    if (cursor === undefined) return { limit };
    const position = this.cursors.decode(cursor, this.listing, this.filters);
    return position.direction === 'next' ? { limit, before: position.position } : { limit, after: position.position };
  }

  /**
   * Sets the page's cursors and gives its body: `next`, the position after its last item (null: the
   * last page); `prev`, for a two-way listing only, the position before its first (null: the first page).
   */
  send<T>(reply: FastifyReply, items: T[], next: string | null, prev?: string | null): { data: T[] } {
    reply.header(
      'x-cursor-next',
      next === null ? '' : this.cursors.encode(this.listing, this.filters, { position: next, direction: 'next' }),
    );
    if (prev !== undefined)
      reply.header(
        'x-cursor-prev',
        prev === null ? '' : this.cursors.encode(this.listing, this.filters, { position: prev, direction: 'prev' }),
      );
    return { data: items };
  }
}
