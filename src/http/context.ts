import type { FastifyReply } from 'fastify';
import type { ActiveSession } from '../accounts/sessions.js';
import type { Permission } from '../accounts/types.js';
import type { InFlightAnswers } from '../agent/in-flight.js';
import type { AppDeps } from '../deps.js';
import type { CacheGroup } from '../lib/ttl-cache.js';
import type { Bucket } from '../limits/index.js';
import type { KeyOwner } from '../projects/keys.js';

/**
 * Who may call a route, declared in its `config.auth`:
 * - `none`: anyone (health, docs, the widget script, the demo page);
 * - `runtime`: a project's public or secret key;
 * - `admin`: the instance admin token, a project's secret key (for that project only), or a
 *   dashboard session (within its user's role; see `permission`).
 */
export type AuthRequirement = 'none' | 'runtime' | 'admin';

/**
 * Who is calling: a project key (runtime or, if secret, admin of its project), the instance admin,
 * or a dashboard user signed in with the session cookie.
 */
export type Caller =
  | { type: 'key'; owner: KeyOwner }
  | { type: 'admin' }
  | { type: 'user'; session: ActiveSession };

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** Per-node caches of hot, rarely changed reads; cleared by any admin write on this node. */
    caches: CacheGroup;
    /** The auth and rate-limit check every request passes (an onRequest hook; see http/auth.ts). */
    authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
    /**
     * The caller as the credential that opened this request stands now, asked again later (by an open
     * event stream), or null when it no longer grants the route: the session ended or its role not
     * enough, the key revoked. A key's caller holds its project as it is now (settings, HMAC secret).
     */
    stillAuthorized(request: FastifyRequest): Promise<Caller | null>;
    /** The answers this node is running: capped per node and per project, drained at shutdown. */
    answers: InFlightAnswers;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Rate-limit bucket of a runtime route; default `general`. */
    bucket?: Bucket;
    /** Error bodies of this route add `verified: false` (the identity endpoints). */
    identityErrors?: boolean;
    /**
     * Who may call the route (see `AuthRequirement`). Every API route declares it; the app refuses
     * to boot with one that does not, and an undeclared route elsewhere counts as `admin`.
     */
    auth?: AuthRequirement;
    /**
     * What a dashboard session needs on an admin route (default: `read` for GET, else `configure`),
     * checked against the user's role on the route's `projectId` param; see http/auth.ts.
     */
    permission?: Permission;
  }
}
