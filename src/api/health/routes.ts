import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

const check = z.enum(['ok', 'error', 'disabled']);

/** Liveness (process answers) and readiness (database and Redis reachable) for load balancers. */
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/health', {
    config: { public: true },
    schema: { tags: ['internal'], response: { 200: z.object({ status: z.literal('ok') }) } },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/ready', {
    config: { public: true },
    schema: {
      tags: ['internal'],
      response: {
        200: z.object({ status: z.literal('ready'), database: check, redis: check }),
        503: z.object({ status: z.literal('unavailable'), database: check, redis: check }),
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
