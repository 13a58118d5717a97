import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { opensslHmac, signHs256 } from '../../test/identity.js';
import { buildApp } from '../app.js';
import type { CreatedProject } from '../projects/projects.js';

const REQUEST_ID = /^req_[0-9A-Za-z]{16}$/;

function expectRateLimitHeaders(headers: Record<string, unknown>) {
  expect(headers['x-ratelimit-limit']).toMatch(/^\d+$/);
  expect(headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  const reset = Number(headers['x-ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
  expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61);
}

describe.each(dialects)('errors on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t);
  });
  afterAll(() => t.close());

  it('answers unknown API routes 404 {"error":"Not found"} with rate-limit headers and a request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/no/such/route', headers: auth(a.publicKey) });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not found' });
    expectRateLimitHeaders(res.headers);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    // Without a key the key check answers first, so the API's routes cannot be probed anonymously.
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/no/such/route' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Unauthorized' });
    expectRateLimitHeaders(anonymous.headers);
    // A known path with a method it does not have: 405 (src/http/method-not-allowed.test.ts).
    const wrongMethod = await t.app.inject({ method: 'DELETE', url: '/api/v1/widget/config', headers: auth(a.publicKey) });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json()).toEqual({ error: 'Method not allowed' });
    const outside = await t.app.inject({ method: 'GET', url: '/no-such-page' });
    expect(outside.statusCode).toBe(404);
    expect(outside.json()).toEqual({ error: 'Not found' });
  });

  it('answers malformed JSON 400 "Validation error" with details', async () => {
    for (const url of ['/api/v1/chat/conversations', '/api/v1/chat/feedback']) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: auth(a.publicKey, { 'content-type': 'application/json' }),
        payload: '{"conversationId": "conv_1", ',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: [{ path: '', message: 'Body is not valid JSON' }] });
      expectRateLimitHeaders(res.headers);
    }
  });

  it('lists at most 100 problems of a body, and how many more there were', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey), payload: {} });
    // Five messages of a thousand parts each, every part of the wrong type.
    const parts = Array.from({ length: 1000 }, () => ({ type: 1 }));
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(a.publicKey),
      payload: { conversationId: created.json().conversationId, messages: Array.from({ length: 5 }, () => ({ role: 'user', parts })) },
    });
    expect(res.statusCode).toBe(400);
    const { error, details } = res.json() as { error: string; details: Array<{ path: string; message: string }> };
    expect(error).toBe('Validation error');
    expect(details).toHaveLength(101);
    expect(details[100]!.message).toMatch(/^and \d+ more problems$/);
    expect(Number(details[100]!.message.match(/\d+/)![0])).toBeGreaterThanOrEqual(4900);
    expect(res.body.length).toBeLessThan(20_000);
  });

  it('answers a body over 100 KiB 413 {"error":"Request body too large"}; send-message allows 1 MiB', async () => {
    const big = JSON.stringify({ conversationId: 'conv_x', rating: 'POSITIVE', comment: 'x'.repeat(101 * 1024) });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/feedback',
      headers: auth(a.publicKey, { 'content-type': 'application/json' }),
      payload: big,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'Request body too large' });
    expectRateLimitHeaders(res.headers);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);

    // The same 101 KiB is within send-message's limit (refused for its content, not its size)...
    const withinChat = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(a.publicKey, { 'content-type': 'application/json' }),
      payload: big,
    });
    expect(withinChat.statusCode).toBe(400);
    // ...and over 1 MiB it is too large there as well.
    const overChat = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(a.publicKey, { 'content-type': 'application/json' }),
      payload: JSON.stringify({ conversationId: 'conv_x', messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] }),
    });
    expect(overChat.statusCode).toBe(413);
    expect(overChat.json()).toEqual({ error: 'Request body too large' });
  });

  it('answers an unexpected failure 500 {"error":"Internal server error"} without stack or internals, and logs it', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) });
    const app = await buildApp({ ...t.deps, config: { ...t.config, LOG_LEVEL: 'info' } }, { logger: { stream } });
    app.get('/api/v1/test/boom', { config: { auth: 'runtime' } }, async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2');
    });
    await app.ready();
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/test/boom', headers: auth(a.publicKey) });
      expect(res.statusCode).toBe(500);
      expect(res.body).toBe('{"error":"Internal server error"}');
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
      expectRateLimitHeaders(res.headers);
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
      expect(logged).toMatchObject({ reqId: res.headers['x-request-id'], err: { message: expect.stringContaining('ECONNREFUSED') } });
    } finally {
      await app.close();
    }
  });

  it('puts a fresh x-request-id on every response, whatever the client sends', async () => {
    const responses = await Promise.all([
      t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(a.publicKey, { 'x-request-id': 'client-chosen' }) }),
      t.app.inject({ method: 'GET', url: '/api/v1/widget/config' }),
      t.app.inject({ method: 'GET', url: '/health' }),
      t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }),
      t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/chat/conversations',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
      }),
      t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(a.publicKey), payload: {} }),
    ]);
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers an OPTIONS that is no complete preflight as a preflight, not with a plain-text 400', async () => {
    for (const headers of [{}, { origin: 'https://shop.example' }, { 'access-control-request-method': 'POST' }]) {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/chat/messages', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    }
  });

  it('never logs keys, HMAC secrets, signatures or tokens', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) });
    const logged = await createTestApp({ dialect, env: { LOG_LEVEL: 'trace' }, logger: { stream } });
    try {
      const p = await createProject(logged);
      const hmac = opensslHmac(p.hmacSecret, 'logged-user');
      const token = signHs256(p.hmacSecret, { sub: 'logged-user', email: 'l@example.com' });
      const wrongKey = `ad_pk_${'Z'.repeat(32)}`;
      const calls: InjectOptions[] = [
        { method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) },
        { method: 'GET', url: '/api/v1/widget/config', headers: { authorization: `Bearer ${p.secretKey}` } },
        { method: 'GET', url: '/api/v1/widget/config', headers: auth(wrongKey) },
        { method: 'POST', url: '/api/v1/identity/verify', headers: auth(p.publicKey), payload: { userId: 'logged-user', hmac } },
        { method: 'POST', url: '/api/v1/identity/verify', headers: auth(p.publicKey), payload: { userId: 'logged-user', hmac: hmac.replace(/^./, '0') } },
        { method: 'POST', url: '/api/v1/identity/identify', headers: auth(p.publicKey), payload: { token } },
        { method: 'POST', url: '/api/v1/identity/identify', headers: auth(p.publicKey), payload: { token: `${token}x` } },
        {
          method: 'POST',
          url: '/api/v1/chat/conversations',
          headers: auth(p.publicKey, { 'x-user-hmac': hmac, 'x-user-token': token }),
          payload: { endUserExternalId: 'logged-user' },
        },
        { method: 'GET', url: '/api/v1/admin/projects', headers: { authorization: `Bearer ${p.secretKey}` } },
        { method: 'GET', url: '/api/v1/nothing-here', headers: auth(p.secretKey, { 'x-user-token': token }) },
        // The demo page takes its public key in the query string; the access log masks it.
        { method: 'GET', url: `/demo?key=${p.publicKey}` },
      ];
      for (const call of calls) await logged.app.inject(call);
      const text = lines.join('');
      // The capture works: every request was logged with its id.
      expect(lines.filter((l) => l.includes('"msg":"request completed"'))).toHaveLength(calls.length);
      for (const secret of [p.publicKey, p.secretKey, p.hmacSecret, wrongKey, hmac, token, token.split('.')[2]]) {
        expect(text).not.toContain(secret);
      }
    } finally {
      await logged.close();
    }
  });
});
