import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose value is a credential wherever a client puts it by mistake: the token
 * endpoint reads credentials only from its body or HTTP Basic (RFC 6749 §2.3.1 forbids them in the
 * URI), and the API reads tokens only from `Authorization` (RFC 6750 §5.3 warns against the URI), yet
 * a misconfigured client can still send `?client_secret=...`, and the request line is logged.
 */
const SECRET_PARAMETERS = new Set(['client_secret', 'access_token', 'refresh_token', 'token', 'secret', 'password', 'api_key', 'apikey']);

/** The service's own secret formats, wherever they appear in a URL (path or query, encoded or not). */
const SECRET_VALUES = /\b(sk_(?:test|live)_|whsec_)[A-Za-z0-9_%-]+/g;

export const REDACTED = '[Redacted]';

/**
 * The request target as it is logged: each value of a credential parameter, and each client or
 * webhook secret found anywhere in it, replaced by `[Redacted]`. Everything else is kept as sent.
 */
export function redactUrl(url: string): string {
  let out = url.replace(SECRET_VALUES, `$1${REDACTED}`);
  const q = out.indexOf('?');
  if (q < 0) return out;
  const query = out
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name: string;
      try {
        name = decodeURIComponent(pair.slice(0, eq).replace(/\+/g, ' '));
      } catch {
        name = pair.slice(0, eq);
      }
      return SECRET_PARAMETERS.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    })
    .join('&');
  out = `${out.slice(0, q)}?${query}`;
  return out;
}

/**
 * pino serialiser of a request, in place of Fastify's default (the same members), with the URL
 * redacted by `redactUrl`.
 */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
