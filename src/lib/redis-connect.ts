/**
 * A Redis connection that failed at start, in words an operator can act on: which server (host and
 * port, never the password REDIS_URL may hold) and why. `cause` is the client's last error event,
 * which holds the socket's code; the rejected connect itself only says "Connection is closed.".
 */
export function redisConnectFailure(url: string, cause: unknown): Error {
  let where = 'REDIS_URL';
  try {
    const u = new URL(url);
    where = `${u.hostname || 'localhost'}:${u.port || '6379'}`;
  } catch {
    // Not a URL: name the setting instead.
  }
  const code = (cause as { code?: string } | null)?.code;
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found'
        : code === 'ETIMEDOUT'
          ? 'no answer within REDIS_CONNECT_TIMEOUT_MS'
          : cause instanceof Error
            ? cause.message
            : String(cause);
  return new Error(`Cannot connect to Redis at ${where} (${why}). Is the server running, and is REDIS_URL right?`, { cause });
}
