/**
 * Whether an error says that the database cannot be reached right now, as opposed to a statement it
 * refused: the connection was refused, reset or cut, the server is shutting down or starting up, or
 * no connection could be had in time. Such a request did nothing that stays (its transaction, if it
 * began, is rolled back by the server); the client retries later, a POST with its Idempotency-Key.
 * The error's `cause` chain is followed, since drivers and query builders wrap.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code)) return true;
      // SQLSTATE class 08 (connection exception), and the server shutting down (57P01 admin,
      // 57P02 crash), starting up or recovering (57P03), or out of connection slots (53300).
      if (/^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
    }
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** node-postgres's own errors for a connection that broke or could not be had (they carry no code). */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Query read timeout/,
];
