import type { Config } from '../config.js';
import type { CacheGroup } from '../lib/ttl-cache.js';
import type { RateLimiter, Bucket } from '../limits/index.js';
import type { Store } from '../store/index.js';
import type { KeyOwner } from '../api/projects/service.js';

/** What every route and service can reach: chosen once at boot. */
export interface AppDeps {
  config: Config;
  store: Store;
  limiter: RateLimiter;
}

/** Who is calling: a project key (runtime or, if secret, admin of its project) or the instance admin. */
export type Caller =
  | { type: 'key'; owner: KeyOwner }
  | { type: 'admin' };

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** Per-node caches of hot, rarely changed reads; cleared by any admin write on this node. */
    caches: CacheGroup;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Rate-limit bucket of a runtime route; default `general`. */
    bucket?: Bucket;
    /** Error bodies of this route add `verified: false` (the identity endpoints). */
    identityErrors?: boolean;
    /** The route needs no API key (health, docs, widget script). */
    public?: boolean;
  }
}
