import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export type Bucket = 'chat' | 'session' | 'general' | 'admin';

/** Requests per 60 s window when the project sets no override. */
export const DEFAULT_LIMITS: Record<Bucket, number> = { chat: 30, session: 10, general: 60, admin: 600 };
export const WINDOW_SECONDS = 60;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
  /** Seconds to wait before retrying; 0 when allowed. */
  retryAfter: number;
}

/**
 * Fixed-window counters. Two forms behind this one interface: in-process memory (one node) and
 * Redis (all nodes share one count), both from rate-limiter-flexible.
 */
export interface RateLimiter {
  readonly kind: 'memory' | 'redis';
  consume(bucket: Bucket, limit: number, key: string): Promise<RateLimitDecision>;
  /**
   * Counts failures (a wrong password) per key over a window of its own: `blocked` says, without
   * counting, whether `limit` failures are already counted in the window; `fail` counts one more.
   */
  strikes(name: string, limit: number, windowSeconds: number): StrikeCounter;
  ping(): Promise<void>;
  /**
   * Redis form: calls `listener` when counting falls back to this node's memory because Redis does
   * not answer (again at most once a minute while it lasts), and when Redis answers again. Returns
   * the unsubscribe function.
   */
  onFallback(listener: (event: FallbackEvent) => void): () => void;
  close(): Promise<void>;
}

export interface StrikeCounter {
  /** Whether the key has used up its failures; `retryAfter` is in seconds (0 when not blocked). */
  blocked(key: string): Promise<{ blocked: boolean; retryAfter: number }>;
  fail(key: string): Promise<void>;
}

export type FallbackEvent =
  | { type: 'fallback'; /** The Redis client's state, e.g. `reconnecting`. */ status: string; /** The last connection error. */ error?: string }
  | { type: 'restored' };

/** Redis connection settings. */
export interface RedisOptions {
  connectTimeoutMs?: number;
  /** Longest wait for a reply; past it the call is counted in memory. */
  commandTimeoutMs?: number;
}

/**
 * Shared core: one rate-limiter-flexible limiter per (bucket, limit), created on first use, since
 * per-project overrides change the point budget.
 */
export function limiterFamily(
  kind: RateLimiter['kind'],
  create: (keyPrefix: string, points: number, durationSeconds: number) => RateLimiterAbstract,
  hooks: Pick<RateLimiter, 'ping' | 'close' | 'onFallback'>,
): RateLimiter {
  const limiters = new Map<string, RateLimiterAbstract>();
  return {
    kind,
    async consume(bucket, limit, key) {
      const id = `${bucket}:${limit}`;
      let limiter = limiters.get(id);
      if (!limiter) {
        limiter = create(`rl:${id}`, limit, WINDOW_SECONDS);
        limiters.set(id, limiter);
      }
      try {
        return decision(limit, true, await limiter.consume(key, 1));
      } catch (err) {
        if (err instanceof RateLimiterRes) return decision(limit, false, err);
        throw err;
      }
    },
    strikes(name, limit, windowSeconds) {
      const id = `strikes:${name}:${limit}:${windowSeconds}`;
      let limiter = limiters.get(id);
      if (!limiter) {
        limiter = create(`rl:${id}`, limit, windowSeconds);
        limiters.set(id, limiter);
      }
      const counter = limiter;
      return {
        async blocked(key) {
          const res = await counter.get(key);
          if (!res || res.consumedPoints < limit) return { blocked: false, retryAfter: 0 };
          return { blocked: true, retryAfter: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
        },
        async fail(key) {
          try {
            await counter.consume(key, 1);
          } catch (err) {
            // Past the limit: the key is blocked already, which is all this count is for.
            if (!(err instanceof RateLimiterRes)) throw err;
          }
        },
      };
    },
    ping: hooks.ping,
    onFallback: hooks.onFallback,
    close: hooks.close,
  };
}

function decision(limit: number, allowed: boolean, res: RateLimiterRes): RateLimitDecision {
  const msBeforeNext = Math.max(0, res.msBeforeNext);
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    reset: Math.ceil((Date.now() + msBeforeNext) / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil(msBeforeNext / 1000)),
  };
}
