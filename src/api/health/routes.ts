import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

const check = z.enum(['ok', 'error', 'disabled']).describe('`disabled`: not configured (Redis without REDIS_URL).');
const readiness = (status: 'ready' | 'unavailable') =>
  z.object({ status: z.literal(status), database: check, redis: check });

/** Liveness (process answers) and readiness (database and Redis reachable) for load balancers. */
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/health', {
    config: { auth: 'none' },
    schema: {
      tags: ['health'],
      operationId: 'getHealth',
      summary: 'Liveness',
      description: 'Answers 200 while the process serves requests; checks nothing else. No key.',
      response: { 200: z.object({ status: z.literal('ok') }).describe('The process is up.') },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/ready', {
    config: { auth: 'none' },
    schema: {
      tags: ['health'],
      operationId: 'getReadiness',
      summary: 'Readiness',
      description: 'Checks that the database (and Redis, when configured) answers; 503 while one does not. No key.',
      response: {
        200: readiness('ready').describe('Ready to serve.'),
        503: readiness('unavailable').describe('The database or Redis does not answer.'),
      },
    },
    handler: async (request, reply) => {
      const { store, limiter } = app.deps;
      const probe = async (fn: () => Promise<void>) => {
        try {
          await fn();
          return 'ok' as const;
        } catch (err) {
          request.log.warn({ err }, 'readiness probe failed');
          return 'error' as const;
        }
      };
      const database = await probe(() => store.ping());
      const redis = limiter.kind === 'redis' ? await probe(() => limiter.ping()) : ('disabled' as const);
      if (database === 'ok' && redis !== 'error') return { status: 'ready' as const, database, redis };
      return reply.code(503).send({ status: 'unavailable' as const, database, redis });
    },
  });
};
