/**
 * Child process of the API benchmark: Fastify with nothing of ours (no logger, hooks, plugins or
 * schemas), one route answering the same fixed JSON bytes. Its figure is the framework's own floor:
 * what the widget config costs above it is our hooks, logging and headers. Prints `{port}` once
 * listening.
 */
import Fastify from 'fastify';
import { announceReady } from './lib.js';

const body = Buffer.from(process.env.BARE_BODY ?? '{}');
const app = Fastify({ logger: false });
app.get('/', (_request, reply) => {
  reply.type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
announceReady({ port: (app.server.address() as { port: number }).port });
