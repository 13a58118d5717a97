import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findKeyOwner, touchKey, type KeyOwner } from '../api/projects/service.js';
import { Forbidden, HttpError, NotFound, TooManyRequests, Unauthorized } from '../lib/errors.js';
import { hashKey, keyKind, safeEqual } from '../lib/keys.js';
import { DEFAULT_LIMITS, type Bucket } from '../limits/index.js';
import type { TtlCache } from '../lib/ttl-cache.js';
import type { Caller } from './context.js';

export const API_PREFIX = '/api/v1';
const ADMIN_PREFIX = `${API_PREFIX}/admin`;

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
 * One onRequest hook for every API call: resolves the caller, counts the call in its rate-limit
 * bucket (also when the key is bad: such calls count per address), sets the X-RateLimit-* headers,
 * then refuses what must be refused. Order matters: headers are set before any error is thrown, so
 * 401s, 403s and 404s carry them too.
 */
export function registerAuth(app: FastifyInstance): void {
  app.decorateRequest('caller', null);
  const owners = app.caches.create<KeyOwner>();
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS' || request.routeOptions.config?.public) return;
    const path = request.url.split('?', 1)[0];
    if (!path.startsWith(API_PREFIX)) return;
    if (path === `${API_PREFIX}/openapi.json`) return;

    const admin = path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);
    const key = presentedKey(request);
    const caller = key ? await resolveCaller(app, key, admin, owners) : null;

    const bucket: Bucket = admin ? 'admin' : (request.routeOptions.config?.bucket ?? 'general');
    const owner = caller?.type === 'key' ? caller.owner : null;
    const limit = (!admin && owner?.project.settings.rateLimits?.[bucket as 'chat']) || DEFAULT_LIMITS[bucket];
    const rateKey = admin
      ? caller ? `cred:${hashKey(key!).slice(0, 32)}` : `ip:${request.ip}`
      : owner ? `${owner.project.id}:${request.ip}` : `ip:${request.ip}`;
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
  });
}

async function resolveCaller(
  app: FastifyInstance,
  key: string,
  admin: boolean,
  owners: TtlCache<KeyOwner>,
): Promise<Caller | null> {
  const token = app.deps.config.ANSWERDESK_ADMIN_TOKEN;
  if (admin && token && safeEqual(key, token)) return { type: 'admin' };
  const kind = keyKind(key);
  if (!kind || (admin && kind !== 'secret')) return null;
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
