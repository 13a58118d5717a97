import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { acceptsGzip } from '../widget-script/service.js';
import { APP_CSP, dashboardFile, dashboardIndex, NOT_BUILT_PAGE, PREVIEW_CSP, type DashboardFile } from './service.js';

/**
 * The dashboard, a single-page app built by `npm run build` into dist/dashboard, served by this
 * small handler rather than @fastify/static: the build has a handful of files, each route here
 * needs its own caching and CSP rule, and every path that is not a file (a client-side route such
 * as /dashboard/p/proj_…/knowledge) answers with index.html.
 *
 * - hashed files under /dashboard/assets/: cached for a year, immutable;
 * - index.html and the widget preview page: `no-cache` (revalidated on each visit, so a new release
 *   is seen at once);
 * - a strict Content-Security-Policy, nosniff, no framing of the app.
 *
 * The pages are public like any login page; the data behind them is the admin API's, which checks
 * the session on every call. Not part of the API document (`hide`).
 */
export const dashboardRoutes: FastifyPluginAsync = async (app) => {
  const send = (request: FastifyRequest, reply: FastifyReply, file: DashboardFile, csp = APP_CSP) => {
    reply
      .header('content-type', file.type)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('vary', 'Accept-Encoding');
    if (file.type.startsWith('text/html')) reply.header('content-security-policy', csp);
    if (file.gzip && acceptsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(file.gzip);
    return reply.send(file.body);
  };

  const serve = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    const rest = (request.params['*'] ?? '').replace(/^\/+/, '');
    const file = rest ? await dashboardFile(rest) : null;
    if (file) return send(request, reply, file, rest === 'preview.html' ? PREVIEW_CSP : APP_CSP);
    // A missing script or style sheet is a 404, not the app's HTML under a .js name.
    if (/\.[a-z0-9]+$/i.test(rest) && !rest.endsWith('.html')) {
      return reply.code(404).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-cache').send('Not found');
    }
    const index = await dashboardIndex();
    if (!index) {
      return reply.code(503).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').header('content-security-policy', APP_CSP).send(NOT_BUILT_PAGE);
    }
    return send(request, reply, index);
  };

  const options = { config: { auth: 'none' as const }, schema: { hide: true } };
  app.get('/', options, async (_request, reply) => reply.redirect('/dashboard/', 302));
  app.get('/dashboard', options, serve);
  app.get('/dashboard/*', options, serve);
};
