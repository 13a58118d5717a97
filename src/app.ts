import cors from '@fastify/cors';
import Fastify, { type FastifyError, type FastifyInstance, type onResponseHookHandler } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import pino from 'pino';
import pretty from 'pino-pretty';
import { defaultMaxAnswers, InFlightAnswers } from './agent/in-flight.js';
import type { Config } from './config.js';
import type { AppDeps } from './deps.js';
import { AccessLog } from './http/access-log.js';
import { isAdminRequirement, registerAuth } from './http/auth.js';
import { proxyTrust } from './http/client-address.js';
import { answerUnroutable, registerErrorHandling } from './http/errors.js';
import { registerHttpMetrics } from './http/metrics.js';
import { registerNulGuard } from './http/nul-guard.js';
import { registerTracing } from './http/tracing.js';
import { registerOpenApi } from './http/openapi.js';
import { ServiceUnavailable, ValidationError } from './lib/errors.js';
import { base62 } from './lib/ids.js';
import { serializeError } from './lib/log-error.js';
import { TickBatchedLines, type LineSink } from './lib/tick-batched-lines.js';
import { CacheGroup } from './lib/ttl-cache.js';
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

/** Methods that write nothing. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Body limit of every route but send-message (which allows 1 MiB). */
export const DEFAULT_BODY_LIMIT = 100 * 1024;

/** Logs what the database pool and the rate-limit store report outside any request. */
function reportInfrastructure(app: FastifyInstance, deps: AppDeps): void {
  const unsubscribe = [
    deps.store.onConnectionLost((err) =>
      app.log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, 'database connection lost; the next query opens a new one'),
    ),
    deps.limiter.onFallback((event) => {
      if (event.type === 'fallback') {
        app.log.warn({ redis: event.status, error: event.error }, "Redis unavailable: rate limits are counted in this node's memory until it answers");
      } else {
        app.log.info('Redis answers again: rate limits are shared by all nodes again');
      }
    }),
  ];
  app.addHook('onClose', async () => {
    for (const stop of unsubscribe) stop();
  });
}

/**
 * Where log lines go: JSON, one object a line, for whatever collects them; or, for a person at a
 * terminal (LOG_FORMAT=pretty, or auto with stdout a TTY), pino-pretty's readable lines. The JSON
 * lines of one turn of the event loop go out as one write at the end of that turn
 * (src/lib/tick-batched-lines.ts): a synchronous write per line cost about a third of the
 * throughput of a cheap endpoint (npm run bench api). That one write is synchronous, as pino's own
 * default destination is: an asynchronous write is a trip through libuv's thread pool and back,
 * which cost more CPU than the write itself (a few µs for a turn's lines) and varied with the
 * machine's load; it also kept lines in memory, without bound, while the thread pool was behind.
 * A collector that stops reading stdout now stalls the node (the write is retried until the pipe
 * takes it, as with pino's defaults) instead of filling its memory.
 * Lines are not held back any longer to gather larger writes: a line waiting in a buffer is late
 * for whoever tails the log and lost if the process is killed. Both forms are flushed on shutdown
 * and at exit.
 */
export function logDestination(format: Config['LOG_FORMAT'], terminal = process.stdout.isTTY === true): pino.DestinationStream {
  if (format === 'pretty' || (format === 'auto' && terminal)) {
    return pretty({ colorize: terminal, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  }
  // SonicBoom's type declarations know only text writes; in buffer mode its write takes a Buffer.
  const lines = new TickBatchedLines(pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as LineSink);
  // The lines of the last turn are handed over (and written) at exit.
  process.once('exit', () => {
    try {
      lines.flushSync();
    } catch {
      // The destination is already closed (stdout went away): nothing more can be written.
    }
  });
  return lines;
}

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
            // Errors are logged by what went wrong, never by what they were about (src/lib/log-error.ts).
            serializers: { err: (err: FastifyError) => serializeError(err) as { type: string; message: string; stack: string } },
            ...(typeof options.logger === 'object' && 'stream' in options.logger ? {} : { stream: logDestination(deps.config.LOG_FORMAT) }),
            ...(typeof options.logger === 'object' ? options.logger : {}),
          },
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: proxyTrust(deps.config.TRUST_PROXY),
    requestIdHeader: false,
    genReqId: () => `req_${base62(16)}`,
    logController: new AccessLog(),
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: (err, request, reply) => void answerUnroutable(err, request, reply),
    // A request that reaches a closing node gets our own 503 (see the draining hook below).
    return503OnClosing: false,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('deps', deps);
  app.decorate('caches', new CacheGroup(deps.config.ANSWERDESK_CACHE_TTL_MS));
  const maxAnswers = deps.config.ANSWERDESK_MAX_ANSWERS ?? defaultMaxAnswers();
  const maxPerProject = Math.min(maxAnswers, deps.config.ANSWERDESK_MAX_ANSWERS_PER_PROJECT ?? Math.ceil(maxAnswers / 2));
  app.decorate('answers', new InFlightAnswers(maxAnswers, maxPerProject));
  reportInfrastructure(app, deps);
  registerTracing(app);
  registerHttpMetrics(app);
  // Admin writes are rare and change what the caches hold (keys, settings, skills): drop them all.
  // The matched route says what was written, however the path was spelled: the hook goes on the
  // admin routes that can write, so reads pay nothing, and neither a read nor a CORS preflight
  // (CORS's catch-all OPTIONS route counts as an admin route) empties the caches.
  // Hooks that do no I/O take `done` rather than being async: an async hook costs a promise and a
  // trip through the microtask queue on every request (npm run bench api).
  const clearCaches: onResponseHookHandler = (request, reply, done) => {
    if (!READS.has(request.method) && reply.statusCode < 400) app.caches.clear();
    done();
  };
  app.addHook('onRoute', (route) => {
    if (!isAdminRequirement(route.config?.auth) || [route.method].flat().every((m) => READS.has(m))) return;
    route.onResponse = [...[route.onResponse ?? []].flat(), clearCaches];
  });

  // An empty JSON body means "no body" (POST /chat/conversations has an optional one). JSON text is
  // UTF-8: bytes that are not are refused, where reading them as a string would have stored U+FFFD
  // in place of what was sent.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = typeof body === 'string' ? body : utf8.decode(body);
    } catch {
      return done(ValidationError([{ path: '', message: 'Body is not valid UTF-8' }]), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    defaultJson(request, text, done);
  });

  // Every answer names its request. Once the node is closing, requests still arriving on open
  // connections are turned away before they touch the database, so the load balancer sends them
  // elsewhere. Liveness still answers.
  let draining = false;
  app.addHook('preClose', async () => void (draining = true));
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (draining && request.url.split('?', 1)[0] !== '/health') return done(ServiceUnavailable());
    done();
  });
  await app.register(cors, {
    origin: true,
    // An OPTIONS that is no complete preflight (no Origin, or no Access-Control-Request-Method) is
    // answered as one, 204, rather than with @fastify/cors's plain-text 400, which no error of this
    // API is: every error body is JSON.
    strictPreflight: false,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['content-type', 'authorization', 'x-api-key', 'x-user-hmac', 'x-user-token', 'if-none-match', 'last-event-id'],
    // One string rather than the list: @fastify/cors joins a list again on every request.
    exposedHeaders: EXPOSED_HEADERS.join(', '),
    maxAge: 600,
  });
  registerErrorHandling(app);
  registerNulGuard(app);
  registerAuth(app);
  await registerOpenApi(app);
  await app.register(routes);
  return app;
}
