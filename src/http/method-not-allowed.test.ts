import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A method a path does not have answers 405 with `Allow`, over a real socket (the path goes on the
 * wire exactly as written, escapes included). It is decided after the auth hook has treated the
 * request as an unknown path, so it needs what a 404 needs and is counted the same way.
 */
describe.each(dialects)('405 Method not allowed on $name', (dialect) => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  function call(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      });
      req.on('error', reject);
      if (body !== undefined) req.setHeader('content-type', 'application/json');
      req.end(body);
    });
  }

  it('answers 405 {"error":"Method not allowed"} with Allow, rate-limit headers and a request id', async () => {
    const p = await createProject(t);
    const res = await call('DELETE', '/api/v1/widget/config', auth(p.publicKey));
    expect(res.status).toBe(405);
    expect(res.body).toBe('{"error":"Method not allowed"}');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(res.headers['x-ratelimit-remaining']).toBe('59');
    expect(res.headers['x-request-id']).toMatch(/^req_/);

    expect((await call('GET', '/api/v1/chat/messages', auth(p.publicKey))).headers.allow).toBe('POST');
    expect((await call('PUT', '/api/v1/chat/conversations', auth(p.publicKey))).headers.allow).toBe('GET, HEAD, POST');
    const head = await call('HEAD', '/api/v1/chat/feedback', auth(p.publicKey));
    expect([head.status, head.headers.allow, head.body]).toEqual([405, 'POST', '']);
    // An unknown path stays 404.
    expect((await call('DELETE', '/api/v1/chat/nothing-here', auth(p.publicKey))).status).toBe(404);
  });

  it('lists the methods of the path the router matched, however it was spelled', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const p = await createProject(t);
    for (const path of ['/api/v1/%61dmin/projects', '/%61pi/v1/admin/projects/', '/api/v1/admin/projects?x=1']) {
      const res = await call('PUT', path, admin, '{}');
      expect([path, res.status, res.headers.allow, res.body]).toEqual([path, 405, 'GET, HEAD, POST', '{"error":"Method not allowed"}']);
    }
    const keys = `/api/v1/admin/projects/${p.project.id}/%6beys`;
    expect((await call('DELETE', keys, admin)).headers.allow).toBe('GET, HEAD, POST');
    // A spelling the router does not match is an unknown path.
    expect((await call('PUT', '/api/v1//admin/projects', admin, '{}')).status).toBe(404);
    expect((await call('PUT', '/api/v1/x/../admin/projects', admin, '{}')).status).toBe(404);
  });

  it('needs a key inside the API, as an unknown path does, and runs nothing', async () => {
    const p = await createProject(t);
    const before = await t.deps.store.db.selectFrom('projects').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    // Without a key: 401 (the API's paths cannot be probed anonymously), whatever the spelling.
    const paths = ['/api/v1/admin/projects', '/api/v1/%61dmin/projects', `/api/v1/admin/projects/${p.project.id}/keys/`, 'http://localhost/api/v1/admin/projects'];
    for (const path of paths) {
      const res = await call('PUT', path, {}, '{"name":"x"}');
      expect([path, res.status, res.body, res.headers.allow]).toEqual([path, 401, '{"error":"Unauthorized"}', undefined]);
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
    // A public key gets the 405 an unknown path's 404 would have been, and nothing is written.
    const put = await call('PUT', '/api/v1/admin/projects', auth(p.publicKey), '{"name":"Intruder"}');
    expect(put.status).toBe(405);
    const after = await t.deps.store.db.selectFrom('projects').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    // Outside the API no key is needed, and there are no rate-limit headers.
    const health = await call('POST', '/health');
    expect([health.status, health.headers.allow, health.body]).toEqual([405, 'GET, HEAD', '{"error":"Method not allowed"}']);
    expect(health.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('counts 405s in the general bucket, as unknown paths are counted', async () => {
    const p = await createProject(t, { rateLimits: { general: 2 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('DELETE', '/api/v1/widget/config', auth(p.publicKey))).status);
    expect(statuses).toEqual([405, 405, 429]);
    const limited = await call('DELETE', '/api/v1/widget/config', auth(p.publicKey));
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
  });
});
