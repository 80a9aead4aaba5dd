import { STATUS_CODES, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';
import type { HttpLimits } from '../config/config.js';
import { ApiError, validationError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Metrics } from './metrics.js';

/**
 * Fastify's and Node's options for the time-outs. Node checks the headers and request time-outs on a
 * timer (every 30 seconds by default, so a 10-second limit could hold a socket 40 seconds); it runs
 * here at least every second, and twice within the headers time-out when that is shorter.
 */
export function timeoutOptions(limits: HttpLimits): { requestTimeout: number; keepAliveTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
    },
  };
}

/** What the HTTP parser reports about a connection, as the error the client is answered with. */
export function connectionErrorToApiError(code: string, limits: HttpLimits): ApiError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        'request_timeout',
        `The request was not received in time (headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms); the connection is closed`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return validationError(
        [{ field: 'headers', rule: 'maxLength', value: null }],
        'Request headers exceed 16 KiB; the connection is closed',
      );
    default:
      // The specification has no 400: a message that is not HTTP is a validation error of the request.
      return validationError([{ field: 'request', rule: 'http', value: code }], 'Malformed HTTP request; the connection is closed');
  }
}

/** An error answered on the raw socket (the request never reached a route): the API's error body, then close. */
export function rawErrorResponse(error: ApiError, requestId: string): string {
  const body = JSON.stringify({
    code: error.code,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
    request_id: requestId,
  });
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'X-Content-Type-Options: nosniff\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * Fastify's `clientErrorHandler`: a request that Node's HTTP parser gave up on (too slow, headers too
 * large, not HTTP) gets the API's error body with a request id of its own, which the log line
 * carries too with the client's address and port (the port also appears in the `incoming request`
 * line of a request whose body was too slow), and its connection is closed. Nothing is written when a response has already started
 * on the connection (it would corrupt it); the connection is then only closed.
 */
export function clientErrorHandler(
  limits: HttpLimits,
  metrics: Metrics,
): (this: FastifyInstance, error: ConnectionError, socket: Socket) => void {
  // Fastify calls the handler with the instance as `this`, whose logger is the service's.
  return function onClientError(this: FastifyInstance, error, socket) {
    // A reset connection, or one already closed: nothing to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const apiError = connectionErrorToApiError(error.code, limits);
    const requestId = newId('request');
    const timedOut = apiError.code === 'request_timeout';
    metrics.recordConnectionClosed(timedOut ? 'request_timeout' : 'malformed_request');
    this.log.info(
      { request_id: requestId, code: error.code, remoteAddress: socket.remoteAddress, remotePort: socket.remotePort },
      timedOut ? 'request not received in time; connection closed' : 'malformed request; connection closed',
    );
    // Node keeps the response being written on the socket in this (long-standing) property.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && inFlight?.headersSent !== true) socket.write(rawErrorResponse(apiError, requestId));
    socket.destroy();
  };
}

/**
 * Caps the connections open at once on the server. Node closes every connection beyond the cap as it
 * arrives, before reading anything from it; each is counted, and a warning is logged at most once a
 * minute while it happens.
 */
export function capConnections(app: FastifyInstance, limits: HttpLimits, metrics: Metrics): void {
  app.server.maxConnections = limits.maxConnections;
  let refused = 0;
  let lastWarning = 0;
  app.server.on('drop', () => {
    metrics.recordConnectionClosed('max_connections');
    refused++;
    const now = Date.now();
    if (now - lastWarning >= 60_000) {
      app.log.warn({ refused, maxConnections: limits.maxConnections }, 'connections refused: CAURI_HTTP_MAX_CONNECTIONS reached');
      lastWarning = now;
      refused = 0;
    }
  });
}
