import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Forbidden, HttpError, NotFound, TooManyRequests, Unauthorized } from '../lib/errors.js';
import { hashKey, keyKind, safeEqual } from '../lib/keys.js';
import type { TtlCache } from '../lib/ttl-cache.js';
import { DEFAULT_LIMITS, type Bucket } from '../limits/index.js';
import { findKeyOwner, touchKey, type KeyOwner } from '../projects/keys.js';
import { clientAddress, proxyTrust } from './client-address.js';
import type { AuthRequirement, Caller } from './context.js';

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
    const caller = key ? await resolveCaller(app, key, required, owners) : null;

    const admin = required === 'admin';
    const bucket: Bucket = admin ? 'admin' : (request.routeOptions.config.bucket ?? 'general');
    const owner = caller?.type === 'key' ? caller.owner : null;
    const limit = (!admin && owner?.project.settings.rateLimits?.[bucket as 'chat']) || DEFAULT_LIMITS[bucket];
    // Not request.ip: requests that no route could even read get a request object that ignores
    // the proxy trust, and they must be counted per client all the same.
    const ip = clientAddress(request, trust);
    const rateKey = admin
      ? caller ? `cred:${hashKey(key!).slice(0, 32)}` : `ip:${ip}`
      : owner ? `${owner.project.id}:${ip}` : `ip:${ip}`;
    const decision = await app.deps.limiter.consume(bucket, limit, rateKey);
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-reset', decision.reset);
    if (!decision.allowed) throw TooManyRequests(decision.retryAfter);

    if (!caller) throw Unauthorized();
    request.caller = caller;
    if (owner) {
      if (!admin) checkOrigin(request, owner);
      void touchKey(app.deps.store.db, owner).catch((err) => request.log.warn({ err }, 'could not record key use'));
    }
  };
  app.decorate('authenticate', authenticate);
  app.addHook('onRequest', authenticate);
}

/** Whether the matched route is an admin route (its writes change what the per-node caches hold). */
export function isAdminRoute(request: FastifyRequest): boolean {
  return requirement(request) === 'admin';
}

async function resolveCaller(
  app: FastifyInstance,
  key: string,
  required: Exclude<Requirement, 'none'>,
  owners: TtlCache<KeyOwner>,
): Promise<Caller | null> {
  const token = app.deps.config.ANSWERDESK_ADMIN_TOKEN;
  if (required !== 'runtime' && token && safeEqual(key, token)) return { type: 'admin' };
  const kind = keyKind(key);
  if (!kind || (required === 'admin' && kind !== 'secret')) return null;
  // Unknown keys are not cached, so random keys cannot crowd real ones out.
  const cached = owners.get(key);
  if (cached) return { type: 'key', owner: cached };
  const owner = await findKeyOwner(app.deps.store.db, key);
  if (owner) owners.set(key, owner);
  return owner ? { type: 'key', owner } : null;
}

function checkOrigin(request: FastifyRequest, owner: KeyOwner): void {
  const allowed = owner.project.settings.allowedOrigins;
  const origin = request.headers.origin;
  if (!allowed?.length || !origin) return;
  if (!allowed.some((o) => o.toLowerCase() === origin.toLowerCase())) throw Forbidden('Origin not allowed');
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
  if (caller?.type === 'key' && caller.owner.kind === 'secret' && caller.owner.project.id === projectId) return;
  if (caller?.type === 'key') throw NotFound('Project not found');
  throw Unauthorized();
}

export function isInstanceAdmin(request: FastifyRequest): boolean {
  return request.caller?.type === 'admin';
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
