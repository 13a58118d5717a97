export { DEFAULT_LIMITS } from './limiter.js';
export type { Bucket, FallbackEvent, RateLimitDecision, RateLimiter, RedisOptions, StrikeCounter } from './limiter.js';
import type { RateLimiter, RedisOptions } from './limiter.js';

/**
 * The rate limiter named by the config: Redis when a URL is given (all nodes share one count), else
 * this process's memory. Each form is loaded only when chosen.
 */
export async function createRateLimiter(redisUrl?: string, prefix = 'answerdesk', redis: RedisOptions = {}): Promise<RateLimiter> {
  if (redisUrl) {
    const { createRedisLimiter } = await import('./redis.js');
    return createRedisLimiter(redisUrl, prefix, redis);
  }
  const { createMemoryLimiter } = await import('./memory.js');
  return createMemoryLimiter();
}
