import { RateLimiterMemory } from 'rate-limiter-flexible';
import { limiterFamily, WINDOW_SECONDS, type Bucket, type RateLimitDecision, type RateLimiter } from './limiter.js';

/** Counts in this process only: right for one node, wrong behind a load balancer. */
export function createMemoryLimiter(): RateLimiter {
  const windows = new MemoryWindows(WINDOW_SECONDS * 1000);
  const family = limiterFamily(
    'memory',
    (keyPrefix, points, duration) => new RateLimiterMemory({ keyPrefix, points, duration }),
    { async ping() {}, onFallback: () => () => {}, async close() {} },
  );
  return { ...family, consume: (bucket, limit, key) => windows.consume(bucket, limit, key) };
}

interface Window {
  count: number;
  /** Epoch ms at which the window ends. */
  endsAt: number;
}

/**
 * The request counts of the memory form, answered synchronously. The count is the one
 * rate-limiter-flexible's RateLimiterMemory keeps (the Redis form's fallback): a window opens with a
 * key's first call and lasts `windowMs`, one count per (bucket, limit) as a project's override
 * changes the budget. RateLimiterMemory answers every call with a promise, a trip through the
 * microtask queue on every request (`npm run bench api`); a call here is a few map lookups.
 * Ended windows are swept once a window, instead of one timer per key.
 */
class MemoryWindows {
  private readonly counts = new Map<Bucket, Map<number, Map<string, Window>>>();
  private sweepAt = 0;

  constructor(private readonly windowMs: number) {}

  consume(bucket: Bucket, limit: number, key: string): RateLimitDecision {
    const now = Date.now();
    if (now >= this.sweepAt) this.sweep(now);
    let byLimit = this.counts.get(bucket);
    if (!byLimit) this.counts.set(bucket, (byLimit = new Map()));
    let windows = byLimit.get(limit);
    if (!windows) byLimit.set(limit, (windows = new Map()));
    let window = windows.get(key);
    if (window && window.endsAt > now) window.count++;
    else windows.set(key, (window = { count: 1, endsAt: now + this.windowMs }));
    const allowed = window.count <= limit;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - window.count),
      reset: Math.ceil(window.endsAt / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((window.endsAt - now) / 1000)),
    };
  }

  private sweep(now: number): void {
    this.sweepAt = now + this.windowMs;
    for (const [bucket, byLimit] of this.counts) {
      for (const [limit, windows] of byLimit) {
        for (const [key, window] of windows) if (window.endsAt <= now) windows.delete(key);
        if (windows.size === 0) byLimit.delete(limit);
      }
      if (byLimit.size === 0) this.counts.delete(bucket);
    }
  }
}
