import type { FastifyInstance } from 'fastify';

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The methods a path has, for the `Allow` header of a 405: each method some route uses is looked up
 * in Fastify's own router (`findRoute` matches a request path the way routing does, escapes and
 * trailing slash included), so the answer cannot disagree with what a request would reach.
 * OPTIONS is left out: it is CORS's catch-all route on every path, answering preflights only.
 */
export function methodIndex(app: FastifyInstance): (url: string) => string[] {
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const m of [route.method].flat()) if (m !== 'OPTIONS') methods.add(m);
  });
  return (url) => {
    return [...methods]
      .filter((method) => app.findRoute({ method: method as 'GET', url }) !== null)
      .sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  };
}
