import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, validationError, type ErrorDetail } from '../lib/errors.js';
import { detailsFromAjv } from '../lib/validation.js';
import type { ErrorObject } from 'ajv';
import { isDatabaseUnavailable } from '../storage/unavailable.js';

/** Whole seconds a client waits before retrying while the database is unreachable (a restart takes a few). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** Names the part of the request a validation error is about, as the API's `details.field` does. */
const ROOT_OF_CONTEXT: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** A route that needs a body got none (or an empty one, which is the same). */
export function missingBody(): ApiError {
  return validationError([{ field: 'body', rule: 'required', value: null }], 'Request body is empty; a JSON object is required');
}

/**
 * Maps anything thrown while handling a request to the one ApiError the client will see. The request,
 * when given, tells a body that failed validation from one that was never sent.
 */
export function toApiError(error: unknown, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    if (e.validationContext === 'body' && request !== undefined && request.body === undefined) return missingBody();
    return validationError(detailsFromAjv(e.validation, ROOT_OF_CONTEXT[e.validationContext ?? 'body'] ?? 'body'));
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'Request body exceeds 65536 bytes');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return validationError([{ field: 'body', rule: 'json', value: null }], 'Request body is not valid JSON');
    default:
      break;
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Malformed requests caught by the framework (a JSON syntax error, a prototype-poisoning key, a
    // bad Content-Length): the specification has no 400, so they are validation errors on the body.
    const detail: ErrorDetail = { field: 'body', rule: error instanceof SyntaxError ? 'json' : 'request', value: null };
    return validationError([detail], error instanceof SyntaxError ? `Request body is not valid JSON: ${e.message}` : e.message);
  }
  if (isDatabaseUnavailable(error)) {
    return new ApiError(
      'service_unavailable',
      'The database is unreachable; nothing was kept. Retry after Retry-After seconds (a POST with the same Idempotency-Key)',
      {
        headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
        cause: error,
      },
    );
  }
  return new ApiError('internal_error', 'Internal error; retry with the same Idempotency-Key', { cause: error });
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const apiError = toApiError(error, request);
  if (apiError.code === 'internal_error') {
    request.log.error({ err: apiError.cause ?? error }, 'request failed');
  } else if (apiError.status >= 500) {
    request.log.warn({ err: apiError.cause ?? error }, 'request failed');
  }
  if (apiError.headers !== undefined) reply.headers(apiError.headers);
  const body: Record<string, unknown> = {
    code: apiError.code,
    message: apiError.message,
    ...(apiError.details === undefined ? {} : { details: apiError.details }),
    request_id: request.id,
    ...apiError.extra,
  };
  return reply.code(apiError.status).type('application/json; charset=utf-8').send(body);
}
