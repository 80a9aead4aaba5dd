/**
 * What is wrong with the URLs of the stores, as the variable it names and the message, or null.
 * The drivers read these URLs with the WHATWG URL parser: a URL it refuses (a space in the host, a port
 * that is not a number or is above 65535) would otherwise stop start-up later, with a stack trace.
 * The value is never repeated in the message, since it may hold a password. A PostgreSQL URL may leave
 * the host empty (`postgres://user@/cauri?host=/run/postgresql`, a Unix socket).
 */
export function storeUrlProblem(databaseUrl: string | null, redisUrl: string | null): [variable: string, message: string] | null {
  if (databaseUrl !== null) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl))
      return ['DATABASE_URL', 'must be a postgres:// URL (leave it unset for the embedded SQLite database)'];
    if (!URL.canParse(databaseUrl.replace('@/', '@localhost/'))) return ['DATABASE_URL', 'is not a valid URL (check its host and port)'];
  }
  if (redisUrl !== null) {
    if (!/^rediss?:\/\//.test(redisUrl)) return ['REDIS_URL', 'must be a redis:// or rediss:// URL'];
    if (!URL.canParse(redisUrl)) return ['REDIS_URL', 'is not a valid URL (check its host and port)'];
  }
  return null;
}
