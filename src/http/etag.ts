import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { isPublicDocument } from './cors.js';

type OnSend = (
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
) => void;

/**
 * Adds a hook to one route's onSend hooks. The HEAD route Fastify derives from each GET ends with a
 * hook of its own that drops the body; a hook of this file must see the body, so on a HEAD route it
 * goes first (no route here has onSend hooks of its own, so the order is otherwise the GET's).
 */
function addOnSend(route: RouteOptions, hook: OnSend): void {
  const existing = [route.onSend as unknown].flat().filter((h) => h !== undefined);
  const isHead = [route.method].flat().every((m) => m === 'HEAD');
  route.onSend = (isHead ? [hook, ...existing] : [...existing, hook]) as RouteOptions['onSend'];
}

/** A strong validator of the body: 128 bits of its SHA-256, base64url, quoted. */
export function strongEtag(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest().subarray(0, 16).toString('base64url')}"`;
}

/** The opaque part of an entity tag as sent: `W/` and the content-coding suffix this file adds are not part of it. */
function opaque(tag: string): string {
  return tag
    .trim()
    .replace(/^W\//, '')
    .replace(/-(br|gzip)"$/, '"');
}

/**
 * Whether `If-None-Match` names the current tag, by the weak comparison RFC 9110 §13.1.2 requires
 * (a weak tag and the compressed representation's tag count as the same content); `*` matches any
 * current representation. Every route that answers 304 decides with this.
 */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => opaque(tag) === etag);
}

/**
 * `ETag` and `304 Not Modified` on the public documents (see cors.ts): a strong tag of the body as
 * sent, so that a client or a cache revalidates with `If-None-Match` and gets an empty 304 while the
 * document is unchanged. A route that sets its own tag (the revocation list, tagged by what it signs)
 * keeps it and answers its own 304s.
 *
 * The tag is computed on the identity body, before compression; a compressed response is another
 * representation of it, so its tag takes the coding as a suffix (`"...-br"`), as RFC 9110 §8.8.3
 * wants of a strong validator, and either form matches on revalidation. `installCompressedEtags`
 * adds that suffix: call it after registering the compression plugin, so that its hook runs after
 * compression's, and `installEtags` before, so that its hook runs first.
 */
/** Replies whose tag this file set (a route's own tag is left as the route made it). */
const TAGGED = new WeakSet<FastifyReply>();

export function installEtags(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!isPublicDocument(route)) return;
    addOnSend(route, (request, reply, payload, done) => {
      if (reply.statusCode !== 200 || reply.hasHeader('etag') || (typeof payload !== 'string' && !Buffer.isBuffer(payload)))
        return done(null, payload);
      const etag = strongEtag(payload);
      reply.header('etag', etag);
      TAGGED.add(reply);
      if (!noneMatchHits(request.headers['if-none-match'], etag)) return done(null, payload);
      reply.code(304).removeHeader('content-type');
      // No body. On a HEAD, Fastify's own last hook takes the empty body (it cannot take none) and
      // sends `Content-Length: 0`, the length a GET with the same If-None-Match gets (RFC 9110 §8.6).
      done(null, request.method === 'HEAD' ? '' : null);
    });
  });
}

export function installCompressedEtags(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!isPublicDocument(route)) return;
    addOnSend(route, (_request, reply, payload, done) => {
      const coding = reply.getHeader('content-encoding');
      const etag = reply.getHeader('etag');
      if ((coding === 'br' || coding === 'gzip') && TAGGED.has(reply) && typeof etag === 'string') {
        reply.header('etag', `${etag.slice(0, -1)}-${coding}"`);
      }
      done(null, payload);
    });
  });
}
