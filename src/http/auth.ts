import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findSession } from '../accounts/sessions.js';
import { roleAllows, type Permission } from '../accounts/types.js';
import { Forbidden, HttpError, NotFound, TooManyRequests, Unauthorized } from '../lib/errors.js';
import { hashKey, keyKind, safeEqual } from '../lib/keys.js';
import { secretBox } from '../lib/secret-box.js';
import type { TtlCache } from '../lib/ttl-cache.js';
import { DEFAULT_LIMITS, type Bucket } from '../limits/index.js';
import { findKeyOwner, touchKey, type KeyOwner } from '../projects/keys.js';
import { clientAddress, proxyTrust } from './client-address.js';
import type { AuthRequirement, Caller } from './context.js';
import { fromOwnOrigin, sessionToken } from './session-cookie.js';

export const API_PREFIX = '/api/v1';

/** What a path that no route matched asks for: any valid credential inside the API, nothing outside. */
type Requirement = AuthRequirement | 'unknown-api';

/** The presented credential: `x-api-key`, else `Authorization: Bearer`. */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const auth = request.headers.authorization;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return null;
}

/**
 * What the request must present, taken from the route the router matched, never from the URL's
 * text: a path spelled with escapes, dot segments or doubled slashes reaches a route only through
 * the router, and then carries that route's requirement. A route without a declaration counts as
 * an admin route (Swagger UI's files are declared public where they are registered).
 */
function requirement(request: FastifyRequest): Requirement {
  if (request.is404) return unknownApiPath(request.url) ? 'unknown-api' : 'none';
  return request.routeOptions.config.auth ?? 'admin';
}

/**
 * Whether a path that no route matched reads as an API path once escapes, doubled slashes, dot
 * segments and case are undone. It decides only how an unknown path is refused (401 without a key,
 * so the API cannot be probed anonymously; else 404): nothing is served either way.
 */
export function unknownApiPath(url: string): boolean {
  // An absolute-form target (`PUT http://host/api/…`, as proxies send it) is read from its path, as
  // the router reads it; otherwise it would pass as a page outside the API.
  const target = /^https?:\/\//i.test(url) ? url.replace(/^https?:\/\/[^/?#]*/i, '') || '/' : url;
  // Byte by byte, so that a broken escape (which no route can match) still reads.
  const decoded = target.split('?', 1)[0].replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const path = new URL(`/${decoded}`.replace(/[/\\]+/g, '/'), 'http://localhost').pathname.toLowerCase();
  return path === '/api' || path.startsWith('/api/');
}

/**
 * Authentication and rate limiting for every route:
 * - at registration, an API route that does not declare `config.auth` stops the boot (fail
 *   closed: a forgotten declaration is never a public route);
 * - on each request, one onRequest hook resolves the caller the matched route requires, counts the
 *   call in its rate-limit bucket (also when the key is bad: such calls count per address), sets
 *   the X-RateLimit-* headers, then refuses what must be refused. Order matters: headers are set
 *   before any error is thrown, so 401s, 403s and 404s carry them too.
 */
export function registerAuth(app: FastifyInstance): void {
  app.decorateRequest('caller', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined && route.url.startsWith(`${API_PREFIX}/`)) {
      throw new Error(`${String(route.method)} ${route.url} must declare who may call it: config.auth 'none', 'runtime' or 'admin'`);
    }
  });
  const owners = app.caches.create<KeyOwner>();
  const trust = proxyTrust(app.deps.config.TRUST_PROXY);
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // CORS preflights carry no credentials (browsers strip them); @fastify/cors answers them.
    if (request.method === 'OPTIONS') return;
    const required = requirement(request);
    if (required === 'none') return;

    const key = presentedKey(request);
    let caller = key ? resolveCaller(app, key, required, owners) : null;
    if (caller instanceof Promise) caller = await caller;
    // The dashboard's session cookie counts where no header credential is given, on admin routes
    // only. It is read from the database on every request: a session ended on one node is ended on all.
    const cookie = !key && required !== 'runtime' ? sessionToken(request) : null;
    if (cookie) {
      const session = await findSession(app.deps.store.db, cookie);
      if (session) caller = { type: 'user', session };
    }

    const admin = required === 'admin';
    const bucket: Bucket = admin ? 'admin' : (request.routeOptions.config.bucket ?? 'general');
    const owner = caller?.type === 'key' ? caller.owner : null;
    const limit = (!admin && owner?.project.settings.rateLimits?.[bucket as 'chat']) || DEFAULT_LIMITS[bucket];
    // Not request.ip: requests that no route could even read get a request object that ignores
    // the proxy trust, and they must be counted per client all the same.
    const ip = clientAddress(request, trust);
    const rateKey = admin
      ? caller?.type === 'user' ? `user:${caller.session.user.id}` : caller ? `cred:${hashKey(key!).slice(0, 32)}` : `ip:${ip}`
      : owner ? `${owner.project.id}:${ip}` : `ip:${ip}`;
    const decision = await app.deps.limiter.consume(bucket, limit, rateKey);
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-reset', decision.reset);
    if (!decision.allowed) {
      app.deps.metrics.rateLimited(bucket);
      throw TooManyRequests(decision.retryAfter);
    }

    if (!caller) throw Unauthorized();
    request.caller = caller;
    if (caller.type === 'user') {
      if (!SAFE_METHODS.has(request.method) && !fromOwnOrigin(request, app.deps.config.ANSWERDESK_PUBLIC_URL)) throw Forbidden('Forbidden');
      authorizeSession(request, caller);
    }
    if (owner) {
      if (!admin) checkOrigin(request, owner);
      touchKey(app.deps.store.db, owner)?.catch((err: unknown) => request.log.warn({ err }, 'could not record key use'));
    }
  };
  app.decorate('authenticate', authenticate);
  app.addHook('onRequest', authenticate);

  // A long-lived response (an event stream) asks again: a session signed out, expired or whose
  // user lost the project, and a key revoked, end it rather than keep it open on a credential
  // that would be refused now. A key is read through the same cache as a request's, so a revoke on
  // another node is seen within the cache's TTL.
  app.decorate('stillAuthorized', async (request: FastifyRequest): Promise<Caller | null> => {
    const caller = request.caller;
    if (caller?.type === 'admin') return caller;
    if (caller?.type === 'user') {
      const token = sessionToken(request);
      const session = token ? await findSession(app.deps.store.db, token, { touch: false }) : null;
      if (!session) return null;
      const now: Caller = { type: 'user', session };
      try {
        authorizeSession(request, now);
      } catch (err) {
        if (err instanceof HttpError) return null;
        throw err;
      }
      return now;
    }
    if (caller?.type !== 'key') return null;
    const key = presentedKey(request);
    const owner = key ? await owners.getOrLoad(key, () => findKeyOwner(app.deps.store.db, secretBox(app.deps.config), key)) : null;
    return owner && owner.keyId === caller.owner.keyId ? { type: 'key', owner } : null;
  });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the matched route asks of a dashboard session: declared, else read for GET and configure otherwise. */
export function routePermission(request: FastifyRequest): Permission {
  return request.routeOptions.config.permission ?? (SAFE_METHODS.has(request.method) ? 'read' : 'configure');
}

/**
 * A dashboard user may call the matched route: an owner anything; a member what their role on the
 * route's `projectId` grants (viewer read, agent read and work, admin all but owner routes). A route
 * without a project is instance-wide: members may only read it (the project list, filtered to their
 * memberships). A project the user has no membership of answers 404, as for a secret key of another
 * project, so its existence is not revealed; a role too weak answers 403 `Forbidden`.
 */
function authorizeSession(request: FastifyRequest, caller: Extract<Caller, { type: 'user' }>): void {
  if (request.is404) return;
  const { user, memberships } = caller.session;
  if (user.role === 'owner') return;
  const permission = routePermission(request);
  if (permission === 'owner') throw Forbidden('Forbidden');
  const projectId = (request.params as Record<string, string | undefined> | undefined)?.projectId;
  if (projectId === undefined) {
    if (permission === 'read') return;
    throw Forbidden('Forbidden');
  }
  const membership = memberships.find((m) => m.projectId === projectId);
  if (!membership) throw NotFound('Project not found');
  if (!roleAllows(membership.role, permission)) throw Forbidden('Forbidden');
}

/** Whether a route declaring `auth` (or nothing: see `requirement`) is an admin route: its writes change what the per-node caches hold. */
export function isAdminRequirement(auth: AuthRequirement | undefined): boolean {
  return (auth ?? 'admin') === 'admin';
}

/**
 * The caller a presented key names. Answered without a promise when no lookup is needed (the admin
 * token, a malformed key, a cached owner: nearly every call), so the common case takes no extra
 * trip through the microtask queue.
 */
function resolveCaller(
  app: FastifyInstance,
  key: string,
  required: Exclude<Requirement, 'none'>,
  owners: TtlCache<KeyOwner>,
): Caller | null | Promise<Caller | null> {
  const token = app.deps.config.ANSWERDESK_ADMIN_TOKEN;
  if (required !== 'runtime' && token && safeEqual(key, token)) return { type: 'admin' };
  const kind = keyKind(key);
  if (!kind || (required === 'admin' && kind !== 'secret')) return null;
  // Unknown keys are not cached, so random keys cannot crowd real ones out.
  const owner = owners.getOrLoad(key, () => findKeyOwner(app.deps.store.db, secretBox(app.deps.config), key));
  return owner instanceof Promise ? owner.then(keyCaller) : keyCaller(owner);
}

const keyCaller = (owner: KeyOwner | null): Caller | null => (owner ? { type: 'key', owner } : null);

function checkOrigin(request: FastifyRequest, owner: KeyOwner): void {
  const allowed = owner.project.settings.allowedOrigins;
  const origin = request.headers.origin;
  if (!allowed?.length || !origin) return;
  if (!allowedOrigins(allowed).has(originOf(origin))) throw Forbidden('Origin not allowed');
}

/** A project's allowed origins as compared, worked out once per settings object (it is cached with the key). */
const allowedSets = new WeakMap<readonly string[], Set<string>>();
function allowedOrigins(list: readonly string[]): Set<string> {
  let set = allowedSets.get(list);
  if (!set) allowedSets.set(list, (set = new Set(list.map(originOf))));
  return set;
}

/**
 * An origin as browsers send it: lower case, without the scheme's default port
 * (`https://Shop.example:443` is `https://shop.example`), so a setting written either way matches.
 */
function originOf(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return value.toLowerCase();
  }
}

/** The project whose key made this runtime call. */
export function keyOwner(request: FastifyRequest): KeyOwner {
  if (request.caller?.type !== 'key') throw Unauthorized();
  return request.caller.owner;
}

/**
 * The admin caller may act on `projectId`: the instance admin on any project, a secret key on its
 * own only. Another project's resources answer 404, so their existence is not revealed.
 */
export function assertProjectAccess(request: FastifyRequest, projectId: string): void {
  const caller = request.caller;
  if (caller?.type === 'admin') return;
  if (caller?.type === 'user') {
    // The role was checked against the route's projectId by the auth hook; this covers the membership.
    const { user, memberships } = caller.session;
    if (user.role === 'owner' || memberships.some((m) => m.projectId === projectId)) return;
    throw NotFound('Project not found');
  }
  if (caller?.type === 'key' && caller.owner.kind === 'secret' && caller.owner.project.id === projectId) return;
  if (caller?.type === 'key') throw NotFound('Project not found');
  throw Unauthorized();
}

/** The instance admin token, or a signed-in owner: everything on the instance, every project. */
export function isInstanceAdmin(request: FastifyRequest): boolean {
  const caller = request.caller;
  return caller?.type === 'admin' || (caller?.type === 'user' && caller.session.user.role === 'owner');
}

/** Instance-wide routes (users, invites): the instance admin token or an owner; never a project key. */
export function assertInstanceAdmin(request: FastifyRequest): void {
  if (!request.caller) throw Unauthorized();
  if (!isInstanceAdmin(request)) throw Forbidden('Forbidden');
}

/** The projects a caller may see in lists: null for all of them. */
export function visibleProjectIds(request: FastifyRequest): Set<string> | null {
  const caller = request.caller;
  if (!caller) throw Unauthorized();
  if (isInstanceAdmin(request)) return null;
  if (caller.type === 'key') return new Set([caller.owner.project.id]);
  if (caller.type === 'user') return new Set(caller.session.memberships.map((m) => m.projectId));
  return new Set();
}

/** Headers that a hijacked reply (the chat stream) must carry itself, since onSend no longer runs. */
export function replyHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

export { HttpError };
