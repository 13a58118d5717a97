import cors from '@fastify/cors';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { base62 } from './lib/ids.js';
import { CacheGroup } from './lib/ttl-cache.js';
import { AccessLog } from './http/access-log.js';
import { registerAuth } from './http/auth.js';
import type { AppDeps } from './http/context.js';
import { registerErrorHandling } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { routes } from './routes.js';

export interface BuildOptions {
  /** false: no logging; an object: pino options over the defaults (tests pass a capturing `stream`). */
  logger?: boolean | Record<string, unknown>;
}

const EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'x-vercel-ai-ui-message-stream',
  'etag',
];

/** Body limit of every route but send-message (which allows 1 MiB). */
export const DEFAULT_BODY_LIMIT = 100 * 1024;

/** Builds the whole HTTP app around already-opened infrastructure (store, limiter). */
export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Options given by the caller (a test's capturing stream) go on top of the redaction, so what
    // is checked is what production logs.
    logger:
      options.logger === false
        ? false
        : {
            level: deps.config.LOG_LEVEL,
            redact: {
              paths: [
                'req.headers.authorization',
                'req.headers["x-api-key"]',
                'req.headers["x-user-hmac"]',
                'req.headers["x-user-token"]',
              ],
              censor: '[redacted]',
            },
            // Buffered, asynchronous writes: a synchronous write per log line cost about a third of
            // the throughput of a cheap endpoint (npm run bench api). Flushed on shutdown.
            ...(typeof options.logger === 'object' && 'stream' in options.logger
              ? {}
              : { stream: pino.destination({ dest: 1, sync: false }) }),
            ...(typeof options.logger === 'object' ? options.logger : {}),
          },
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: deps.config.TRUST_PROXY,
    requestIdHeader: false,
    genReqId: () => `req_${base62(16)}`,
    logController: new AccessLog(),
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('deps', deps);
  app.decorate('caches', new CacheGroup(deps.config.ANSWERDESK_CACHE_TTL_MS));
  // Admin writes are rare and change what the caches hold (keys, settings, skills): drop them all.
  app.addHook('onResponse', async (request, reply) => {
    if (request.method !== 'GET' && reply.statusCode < 400 && request.url.startsWith('/api/v1/admin/')) app.caches.clear();
  });

  // An empty JSON body means "no body" (POST /chat/conversations has an optional one).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    defaultJson(request, text, done);
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  await app.register(cors, {
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['content-type', 'authorization', 'x-api-key', 'x-user-hmac', 'x-user-token', 'if-none-match'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  registerErrorHandling(app);
  registerAuth(app);
  await registerOpenApi(app);
  await app.register(routes);
  return app;
}
