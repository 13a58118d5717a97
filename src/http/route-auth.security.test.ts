import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { createKey } from '../projects/keys.js';
import type { CreatedProject } from '../projects/projects.js';

/**
 * Authorization follows the route the router matched, whatever spelling of the path reached it.
 * The routes are read from the app itself, so a route added later is covered without editing
 * this file; they are called over a real socket because `app.inject` normalizes the URL (dot
 * segments, a leading `//`) before the app sees it, and an attacker's client does not.
 */

interface Route {
  method: string;
  url: string;
}

/** Every registered method + URL pattern, from Fastify's own route tree. */
function registeredRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    stack.length = match[1].length / 4;
    stack.push(match[2]);
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, url: stack.join('') });
  }
  return routes;
}

const pct = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/**
 * Spellings of one path that a router or a proxy may treat as the same path, or nearly: each
 * segment with an escaped first letter, every byte escaped, upper-case escapes and letters, doubled
 * slashes, dot segments (plain and escaped), an escaped slash or a backslash, a trailing slash,
 * the absolute form a proxy sends (`GET http://host/path`), and broken escapes that the router
 * cannot decode.
 */
function spellings(path: string): string[] {
  const segments = path.split('/').slice(1);
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const out = new Set<string>([path, `${path}/`, `${path}?x=1`, path.toUpperCase(), join(segments.map(pct)), join(segments.map((s) => pct(s).toUpperCase()))]);
  segments.forEach((segment, i) => {
    if (/^[a-z]/i.test(segment)) out.add(join(segments.map((s, j) => (j === i ? pct(s[0]) + s.slice(1) : s))));
    // Doubled slash before this segment, and a dot segment pair that lands on the same path.
    out.add(join([...segments.slice(0, i), '', ...segments.slice(i)]));
    out.add(join([...segments.slice(0, i), 'x', '..', ...segments.slice(i)]));
    out.add(join([...segments.slice(0, i), 'x', '%2e%2e', ...segments.slice(i)]));
    out.add(join([...segments.slice(0, i), '.', ...segments.slice(i)]));
  });
  out.add(`/${segments[0]}%2f${segments.slice(1).join('/')}`);
  out.add(`/${segments[0]}%2F${segments.slice(1).join('/')}`);
  out.add(`//${segments.join('/')}`);
  out.add(`/${segments[0]}\\${segments.slice(1).join('/')}`);
  out.add(`http://localhost${path}`);
  out.add(`http://localhost/%61${path.slice(2)}`);
  out.add(`${path}%`);
  out.add(`${path}/%E0%A4%A`);
  out.add(`/%zz${path.slice(1)}`);
  return [...out];
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

describe.each(dialects)('authorization by matched route on $name', { timeout: 180_000 }, (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let base: { port: number };
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let clients = 0;

  beforeAll(async () => {
    // Behind a trusted proxy on loopback, each call can come from its own client address, so that
    // the per-address buckets of calls without a valid key never run out in this test.
    t = await createTestApp({ dialect, env: { TRUST_PROXY: '127.0.0.1', ANSWERDESK_CACHE_TTL_MS: '60000' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = { port: (t.app.server.address() as AddressInfo).port };
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    p = await createProject(t);
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
  });

  /** A raw request: the path goes on the wire exactly as written. */
  function call(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
    clients++;
    const client = `10.${(clients >> 16) & 255}.${(clients >> 8) & 255}.${clients & 255}`;
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: base.port, method, path, agent, headers: { 'x-forwarded-for': client, ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        },
      );
      req.on('error', reject);
      if (body !== undefined) req.setHeader('content-type', 'application/json');
      req.end(body);
    });
  }

  /** The API's routes with their parameters filled: a real project id, made-up ids for the rest. */
  function apiRoutes() {
    const routes = registeredRoutes(t.app).filter((r) => r.url.startsWith('/api/') && r.method !== 'OPTIONS');
    return routes.map((r) => ({
      ...r,
      admin: r.url.startsWith('/api/v1/admin'),
      path: r.url.replace(':projectId', p.project.id).replace(/:(\w+)/g, (_, name: string) => `${name.replace(/Id$/, '')}_0000000000000000000000`),
    }));
  }

  it('reads every admin and runtime route from the app', () => {
    const routes = apiRoutes();
    const named = routes.map((r) => `${r.method} ${r.url}`);
    expect(named).toEqual(
      expect.arrayContaining([
        'GET /api/v1/admin/projects',
        'DELETE /api/v1/admin/projects/:projectId/keys/:keyId',
        'POST /api/v1/admin/projects/:projectId/knowledge/files',
        'POST /api/v1/chat/messages',
        'GET /api/v1/widget/config',
      ]),
    );
    expect(routes.filter((r) => r.admin).length).toBeGreaterThan(30);
  });

  it('never serves an API route without a valid key, whatever the spelling of its path', async () => {
    const served: string[] = [];
    // Public by design: the document, and sign-in under /api/v1/auth (how a session is obtained; it
    // reads the session cookie itself and has its own tests in src/api/accounts/).
    for (const route of apiRoutes().filter((r) => r.url !== '/api/v1/openapi.json' && !r.url.startsWith('/api/v1/auth/'))) {
      for (const path of spellings(route.path)) {
        const body = ['POST', 'PATCH', 'PUT'].includes(route.method) ? '{}' : undefined;
        const credentials: Array<Record<string, string>> = [{}, { 'x-api-key': `ad_sk_${'x'.repeat(40)}` }, { authorization: 'Bearer nonsense' }];
        for (const headers of credentials) {
          const res = await call(route.method, path, headers, body);
          // 401 before anything else, also for unknown spellings of an API path; a spelling that
          // is no API path at all (a broken escape inside "api") is an unknown page: 404.
          const ok =
            (res.status === 401 && (route.method === 'HEAD' || res.body === '{"error":"Unauthorized"}') && res.headers['x-ratelimit-limit'] !== undefined) ||
            (res.status === 404 && (route.method === 'HEAD' || res.body === '{"error":"Not found"}'));
          if (!ok) served.push(`${route.method} ${path} ${JSON.stringify(headers)} -> ${res.status} ${res.body.slice(0, 80)}`);
        }
      }
    }
    expect(served).toEqual([]);
  });

  it('never lets a public key reach an admin route, whatever the spelling of its path', async () => {
    const served: string[] = [];
    for (const route of apiRoutes().filter((r) => r.admin)) {
      for (const path of spellings(route.path)) {
        const body = ['POST', 'PATCH', 'PUT'].includes(route.method) ? '{}' : undefined;
        const res = await call(route.method, path, auth(p.publicKey), body);
        // 401 on the admin route itself; a spelling no route matches is an unknown path (404).
        const refused =
          (res.status === 401 && (route.method === 'HEAD' || res.body === '{"error":"Unauthorized"}')) ||
          (res.status === 404 && (route.method === 'HEAD' || res.body === '{"error":"Not found"}'));
        if (!refused) served.push(`${route.method} ${path} -> ${res.status} ${res.body.slice(0, 80)}`);
      }
    }
    expect(served).toEqual([]);
  });

  it('answers a method a path does not have like an unknown path, whatever the spelling: 401 without a key, else 405 or 404', async () => {
    const byPath = new Map<string, { path: string; methods: Set<string> }>();
    for (const r of apiRoutes()) {
      const entry = byPath.get(r.url) ?? { path: r.path, methods: new Set<string>() };
      entry.methods.add(r.method);
      byPath.set(r.url, entry);
    }
    const wrong: string[] = [];
    for (const { path, methods } of byPath.values()) {
      const method = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !methods.has(m))!;
      for (const spelled of spellings(path)) {
        const body = ['POST', 'PATCH', 'PUT'].includes(method) ? '{}' : undefined;
        const anonymous = await call(method, spelled, {}, body);
        if (!(anonymous.status === 401 && anonymous.body === '{"error":"Unauthorized"}') && !(anonymous.status === 404 && anonymous.body === '{"error":"Not found"}')) {
          wrong.push(`anonymous ${method} ${spelled} -> ${anonymous.status} ${anonymous.body.slice(0, 80)}`);
        }
        for (const credential of [auth(p.publicKey), { authorization: `Bearer ${ADMIN_TOKEN}` }]) {
          const res = await call(method, spelled, credential, body);
          const allow = String(res.headers.allow ?? '').split(', ');
          const notAllowed = res.status === 405 && res.body === '{"error":"Method not allowed"}' && allow.length > 0 && !allow.includes(method) && allow.every((m) => /^[A-Z]+$/.test(m));
          const unknown = res.status === 404 && res.body === '{"error":"Not found"}';
          if (!notAllowed && !unknown) wrong.push(`${method} ${spelled} -> ${res.status} ${res.body.slice(0, 80)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('serves the spellings the router matches only to the credential the route requires', async () => {
    const list = await call('GET', '/%61pi/v1/admin/projects', { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body).projects.map((x: { id: string }) => x.id)).toContain(p.project.id);
    const own = await call('GET', '/api/v1/%61dmin/projects', auth(p.secretKey));
    expect(own.status).toBe(200);
    expect(JSON.parse(own.body).projects.map((x: { id: string }) => x.id)).toEqual([p.project.id]);
    const widget = await call('GET', '/api/%761/widget/config/', auth(p.publicKey));
    expect(widget.status).toBe(200);
    // The admin token is not a runtime key.
    expect((await call('GET', '/api/v1/widget/%63onfig', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(401);
    // Unknown paths: 404 with a key, outside the API 404 without one.
    expect((await call('GET', '/api/v1/x/../admin/projects', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(404);
    expect((await call('GET', '/%6eo-such-page')).status).toBe(404);
  });

  it('answers a path the router cannot decode as an unknown path: 401 without a key, 404 with one, with our headers', async () => {
    // A broken escape, broken UTF-8, and a parameter over the router's 100 characters.
    for (const path of ['/api/v1/admin/projects%zz', '/api/v1/widget/config/%E0%A4%A', `/api/v1/chat/conversations/conv_${'x'.repeat(120)}`]) {
      const anonymous = await call('GET', path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toBe('{"error":"Unauthorized"}');
      expect(anonymous.headers['x-ratelimit-limit']).toBe('60');
      expect(anonymous.headers['x-request-id']).toMatch(/^req_/);
      const keyed = await call('GET', path, auth(p.publicKey));
      expect(keyed.status).toBe(404);
      expect(keyed.body).toBe('{"error":"Not found"}');
      expect(keyed.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    }
    const outside = await call('GET', '/no-such-%zz');
    expect(outside.status).toBe(404);
    expect(outside.body).toBe('{"error":"Not found"}');
  });

  it('refuses to boot with an API route that does not declare who may call it, and treats other undeclared routes as admin routes', async () => {
    const app = await buildApp(t.deps, { logger: false });
    try {
      expect(() => app.get('/api/v1/forgotten', async () => ({ leaked: true }))).toThrow(/config\.auth/);
      app.get('/internal/forgotten', async () => ({ leaked: true }));
      await app.ready();
      const anonymous = await app.inject({ method: 'GET', url: '/internal/forgotten' });
      expect(anonymous.statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/internal/forgotten', headers: auth(p.publicKey) })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/internal/forgotten', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()).toEqual({ leaked: true });
    } finally {
      await app.close();
    }
  });

  it('clears the per-node caches after an admin write made through an odd spelling of the path', async () => {
    const q = await createProject(t);
    const widget = () => call('GET', '/api/v1/widget/config', auth(q.publicKey));
    const spelled = [
      (id: string) => `/api/v1/%61dmin/projects/${q.project.id}/keys/${id}`,
      (id: string) => `/%61pi/v1/admin/projects/${q.project.id}/keys/${id}`,
      (id: string) => `/api/%761/admin/projects/${q.project.id}/keys/${id}/`,
    ];
    for (const [i, path] of spelled.entries()) {
      const extra = await createKey(t.deps.store.db, q.project.id, { kind: 'public' });
      const byExtra = () => call('GET', '/api/v1/widget/config', auth(extra.secret));
      expect((await byExtra()).status).toBe(200);
      // Revoked with the project's own secret key, then with the instance admin token.
      const credential = i % 2 === 0 ? auth(q.secretKey) : { authorization: `Bearer ${ADMIN_TOKEN}` };
      const revoked = await call('DELETE', path(extra.row.id), credential);
      expect(revoked.status).toBe(200);
      // The cache holds the key for a minute: only the clear makes the revocation take effect now.
      expect((await byExtra()).status).toBe(401);
    }
    expect((await widget()).status).toBe(200);
    const patched = await call('PATCH', `/api/v1/%61dmin/projects/${q.project.id}`, auth(q.secretKey), JSON.stringify({ settings: { widget: { primaryColor: '#0a0b0c' } } }));
    expect(patched.status).toBe(200);
    expect(JSON.parse((await widget()).body).primaryColor).toBe('#0a0b0c');
  });
});
