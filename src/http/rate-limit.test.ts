import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auth, createProject, createTestApp, dialects, limiterKinds, type TestApp } from '../../test/helper.js';
import { base62 } from '../lib/ids.js';

function expectHeaders(res: LightMyRequestResponse, limit: number, remaining: number) {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(String(reset)).toBe(res.headers['x-ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  const nowS = Date.now() / 1000;
  expect(reset).toBeGreaterThan(nowS);
  expect(reset).toBeLessThanOrEqual(Math.ceil(nowS) + 60);
}

function expectLimited(res: LightMyRequestResponse, limit: number) {
  expect(res.statusCode).toBe(429);
  expect(res.body).toBe('{"error":"Rate limit exceeded"}');
  expectHeaders(res, limit, 0);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe.each(dialects)('rate limits on $name', (dialect) => {
  describe.each(limiterKinds)('with the $name limiter', (kind) => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ dialect, redisUrl: kind.url });
      expect(t.deps.limiter.kind).toBe(kind.name);
    });
    afterAll(() => t.close());

    const widget = (key: string) => t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(key) });
    const createConversation = (key: string) => t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(key) });
    // An empty body is refused by validation, after the call has been counted: no model runs.
    const sendMessage = (key: string) => t.app.inject({ method: 'POST', url: '/api/v1/chat/messages', headers: auth(key), payload: {} });

    it('sets the headers on every response: 200, 304, 400, 401 and 404', async () => {
      const p = await createProject(t);
      const ok = await widget(p.publicKey);
      expect(ok.statusCode).toBe(200);
      expectHeaders(ok, 60, 59);
      const notModified = await t.app.inject({
        method: 'GET',
        url: '/api/v1/widget/config',
        headers: auth(p.publicKey, { 'if-none-match': ok.headers.etag as string }),
      });
      expect(notModified.statusCode).toBe(304);
      expectHeaders(notModified, 60, 58);
      const invalid = await t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(p.publicKey), payload: {} });
      expect(invalid.statusCode).toBe(400);
      expectHeaders(invalid, 60, 57);
      const notFound = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations/conv_missing', headers: auth(p.publicKey) });
      expect(notFound.statusCode).toBe(404);
      expectHeaders(notFound, 60, 56);
      const unknownRoute = await t.app.inject({ method: 'GET', url: '/api/v1/nope', headers: auth(p.publicKey) });
      expect(unknownRoute.statusCode).toBe(404);
      expectHeaders(unknownRoute, 60, 55);
      const unauthorized = await widget(`ad_pk_${base62(32)}`);
      expect(unauthorized.statusCode).toBe(401);
      expect(Number(unauthorized.headers['x-ratelimit-remaining'])).toBeLessThan(60);
      expectHeaders(unauthorized, 60, Number(unauthorized.headers['x-ratelimit-remaining']));
    });

    it('limits session creation to 10 a minute, apart from the general bucket', async () => {
      const p = await createProject(t);
      for (let i = 0; i < 10; i++) {
        const res = await createConversation(p.publicKey);
        expect(res.statusCode).toBe(201);
        expectHeaders(res, 10, 9 - i);
      }
      expectLimited(await createConversation(p.publicKey), 10);
      const count = await t.deps.store.db.selectFrom('conversations').select('id').where('project_id', '=', p.project.id).execute();
      expect(count).toHaveLength(10);
      const general = await widget(p.publicKey);
      expect(general.statusCode).toBe(200);
      expectHeaders(general, 60, 59);
    });

    it('limits other runtime calls to 60 a minute', async () => {
      const p = await createProject(t);
      for (let i = 0; i < 60; i++) expect((await widget(p.publicKey)).statusCode).toBe(200);
      expectLimited(await widget(p.publicKey), 60);
      expectLimited(await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=u', headers: auth(p.publicKey) }), 60);
      // Session creation has its own bucket.
      expect((await createConversation(p.publicKey)).statusCode).toBe(201);
    });

    it('limits send-message (route bucket "chat") to 30 a minute', async () => {
      const p = await createProject(t);
      for (let i = 0; i < 30; i++) {
        const res = await sendMessage(p.publicKey);
        expect(res.statusCode).toBe(400);
        expectHeaders(res, 30, 29 - i);
      }
      expectLimited(await sendMessage(p.publicKey), 30);
      expect((await widget(p.publicKey)).statusCode).toBe(200);
    });

    if (kind.name === 'memory') it('starts a new count when the window of the first call ends, 60 s after it', async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      try {
        const p = await createProject(t, { rateLimits: { general: 2 } });
        const first = await widget(p.publicKey);
        expectHeaders(first, 2, 1);
        vi.setSystemTime(Date.now() + 30_000);
        const second = await widget(p.publicKey);
        expectHeaders(second, 2, 0);
        // Same window: it ends 60 s after the first call, not after the latest.
        expect(second.headers['x-ratelimit-reset']).toBe(first.headers['x-ratelimit-reset']);
        const limited = await widget(p.publicKey);
        expectLimited(limited, 2);
        expect(Number(limited.headers['retry-after'])).toBe(30);
        vi.setSystemTime(Date.now() + 30_000);
        const next = await widget(p.publicKey);
        expect(next.statusCode).toBe(200);
        expectHeaders(next, 2, 1);
        expect(Number(next.headers['x-ratelimit-reset'])).toBe(Number(first.headers['x-ratelimit-reset']) + 60);
      } finally {
        vi.useRealTimers();
      }
    });

    it("applies the project's settings.rateLimits overrides per bucket", async () => {
      const p = await createProject(t, { rateLimits: { general: 3, session: 2, chat: 1 } });
      for (let i = 0; i < 3; i++) expectHeaders(await widget(p.publicKey), 3, 2 - i);
      expectLimited(await widget(p.publicKey), 3);
      for (let i = 0; i < 2; i++) expect((await createConversation(p.publicKey)).statusCode).toBe(201);
      expectLimited(await createConversation(p.publicKey), 2);
      expect((await sendMessage(p.publicKey)).statusCode).toBe(400);
      expectLimited(await sendMessage(p.publicKey), 1);
    });

    it("counts per project: another project's calls, and calls without a valid key, never use its budget", async () => {
      const a = await createProject(t, { rateLimits: { general: 3 } });
      const b = await createProject(t, { rateLimits: { general: 3 } }, 'Beta');
      expectHeaders(await widget(a.publicKey), 3, 2);
      for (let i = 0; i < 3; i++) expect((await widget(b.secretKey)).statusCode).toBe(200);
      expectLimited(await widget(b.publicKey), 3);
      for (let i = 0; i < 3; i++) expect((await widget(`ad_pk_${base62(32)}`)).statusCode).toBe(401);
      const stillA = await widget(a.publicKey);
      expect(stillA.statusCode).toBe(200);
      expectHeaders(stillA, 3, 1);
    });

    it(kind.name === 'redis' ? 'shares one count between app instances on one Redis prefix, not across prefixes' : 'keeps counts in-process: separate instances count separately', async () => {
      const p = await createProject(t, { rateLimits: { general: 3 } });
      const prefix = `test:${base62(10)}`;
      const node1 = await createTestApp({ dialect, store: t.deps.store, redisUrl: kind.url, redisPrefix: prefix });
      const node2 = await createTestApp({ dialect, store: t.deps.store, redisUrl: kind.url, redisPrefix: prefix });
      const other = await createTestApp({ dialect, store: t.deps.store, redisUrl: kind.url, redisPrefix: `test:${base62(10)}` });
      try {
        const get = (app: TestApp) => app.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
        expectHeaders(await get(node1), 3, 2);
        expectHeaders(await get(node2), 3, kind.name === 'redis' ? 1 : 2);
        expectHeaders(await get(node1), 3, kind.name === 'redis' ? 0 : 1);
        if (kind.name === 'redis') expectLimited(await get(node2), 3);
        else expectHeaders(await get(node2), 3, 1);
        // A different prefix is a separate count.
        expectHeaders(await get(other), 3, 2);
      } finally {
        await node1.close();
        await node2.close();
        await other.close();
      }
    });
  });
});
