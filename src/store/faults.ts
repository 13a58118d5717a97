/**
 * Database faults that say "the database cannot be reached right now" rather than "this query is
 * wrong": the request may succeed later, so it answers 503 with Retry-After, and a write that must
 * not be lost (an answer) is tried again on a fresh connection.
 */

/** PostgreSQL SQLSTATEs of a lost, refused or overloaded server, or of a statement that timed out. */
const PG_UNAVAILABLE = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown, PgBouncer's server_idle_timeout
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, in recovery
  '53300', // too_many_connections
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '25006', // read_only_sql_transaction: connected to a standby after a failover
]);

/** Socket-level failures (Node's codes). */
const NET_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** What the pg client and pool say, without a code, when a connection dies or a timeout fires. */
const PG_CLIENT_MESSAGES = [
  /^Connection terminated/, // unexpectedly / due to connection timeout
  /^timeout exceeded when trying to connect$/, // connectionTimeoutMillis (also a pool that stays full)
  /^Query read timeout$/, // query_timeout
  /is not queryable$/, // a client that already lost its connection
];

/** True when `err` means the database is unreachable, gone, overloaded or timed out, in either database. */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') && code.length === 5) return true; // connection_exception class
  if (PG_UNAVAILABLE.has(code) || NET_UNAVAILABLE.has(code)) return true;
  // SQLite: another connection holds the write lock past busy_timeout.
  if (code.startsWith('SQLITE_BUSY')) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return PG_CLIENT_MESSAGES.some((re) => re.test(message));
}

export interface RetryOptions {
  /** Give up once this much time has passed since the first attempt. */
  budgetMs: number;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (err: unknown, attempt: number) => void;
}

/**
 * Runs `fn` and, while it fails with {@link isUnavailable}, runs it again after a growing pause
 * (0.2 s doubling to 5 s) until `budgetMs` is spent. Other errors, and the last one, are thrown.
 * Each attempt takes a connection from the pool anew, so one that was cut is not reused.
 */
export async function retryWhileUnavailable<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const started = Date.now();
  let pause = 200;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailable(err) || Date.now() - started + pause > options.budgetMs) throw err;
      options.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 5000);
    }
  }
}
