import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { opensslHmac, signHs256 } from '../../test/identity.js';
import { appendMessage } from '../conversations/messages.js';
import { revokeKey, createKey } from '../projects/keys.js';
import type { CreatedProject } from '../projects/projects.js';

describe.each(dialects)('auth on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t, { widget: { primaryColor: '#aa0000' } });
    b = await createProject(t, { widget: { primaryColor: '#00bb00' } }, 'Beta');
  });
  afterAll(() => t.close());

  const config = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers });

  describe('API keys', () => {
    it('accepts a public or secret key in x-api-key or as Authorization: Bearer', async () => {
      const variants: Array<Record<string, string>> = [
        { 'x-api-key': a.publicKey },
        { 'x-api-key': a.secretKey },
        { authorization: `Bearer ${a.publicKey}` },
        { authorization: `bearer ${a.secretKey}` },
      ];
      for (const headers of variants) {
        const res = await config(headers);
        expect(res.statusCode).toBe(200);
        expect(res.json().primaryColor).toBe('#aa0000');
      }
    });

    it('answers missing, malformed, unknown and revoked keys 401 {"error":"Unauthorized"} with rate-limit headers', async () => {
      const p = await createProject(t);
      const extra = await createKey(t.deps.store.db, p.project.id, { kind: 'public' });
      expect((await config(auth(extra.secret))).statusCode).toBe(200);
      await revokeKey(t.deps.store.db, p.project.id, extra.row.id);
      const cases: Record<string, Record<string, string>> = {
        missing: {},
        empty: { 'x-api-key': '' },
        malformed: { 'x-api-key': 'ad_pk_short' },
        hmacSecretAsKey: { 'x-api-key': p.hmacSecret },
        basicScheme: { authorization: `Basic ${Buffer.from(`user:${p.publicKey}`).toString('base64')}` },
        bearerWithoutToken: { authorization: 'Bearer' },
        unknown: { 'x-api-key': `ad_pk_${'A'.repeat(32)}` },
        unknownSecret: { authorization: `Bearer ad_sk_${'b'.repeat(40)}` },
        revoked: { 'x-api-key': extra.secret },
      };
      for (const [name, headers] of Object.entries(cases)) {
        const res = await config(headers);
        expect({ name, status: res.statusCode, body: res.body }).toEqual({ name, status: 401, body: '{"error":"Unauthorized"}' });
        expect(res.headers['x-ratelimit-limit']).toBe('60');
      }
    });
  });

  describe('browser origins', () => {
    it('refuses an Origin not in allowedOrigins with 403 {"error":"Origin not allowed"} and allows listed or absent ones', async () => {
      const p = await createProject(t, { allowedOrigins: ['https://shop.example', 'http://localhost:8080'] });
      const refused = await config(auth(p.publicKey, { origin: 'https://evil.example' }));
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ error: 'Origin not allowed' });
      expect(refused.headers['x-ratelimit-limit']).toBe('60');
      const create = await t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/conversations',
        headers: auth(p.publicKey, { origin: 'https://shop.example.evil.test' }),
      });
      expect(create.statusCode).toBe(403);
      expect(await t.deps.store.db.selectFrom('conversations').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);

      for (const origin of ['https://shop.example', 'HTTPS://SHOP.EXAMPLE', 'http://localhost:8080']) {
        const ok = await config(auth(p.publicKey, { origin }));
        expect(ok.statusCode).toBe(200);
        expect(ok.headers['access-control-allow-origin']).toBe(origin);
      }
      // Server-to-server calls carry no Origin.
      expect((await config(auth(p.publicKey))).statusCode).toBe(200);
      // A setting written with the scheme's default port matches the origin a browser sends, which
      // never names it; another port is another origin.
      const ported = await createProject(t, { allowedOrigins: ['https://shop.example:443', 'http://localhost:80'] });
      for (const origin of ['https://shop.example', 'http://localhost']) expect((await config(auth(ported.publicKey, { origin }))).statusCode).toBe(200);
      expect((await config(auth(ported.publicKey, { origin: 'https://shop.example:8443' }))).statusCode).toBe(403);
      expect((await config(auth(ported.publicKey, { origin: 'null' }))).statusCode).toBe(403);
      // Without a list, any origin may call.
      expect((await config(auth(a.publicKey, { origin: 'https://anywhere.example' }))).statusCode).toBe(200);
    });

    it('answers CORS preflight for any origin and exposes the rate-limit and stream headers', async () => {
      const p = await createProject(t, { allowedOrigins: ['https://shop.example'] });
      for (const origin of ['https://shop.example', 'https://other.example']) {
        const res = await t.app.inject({
          method: 'OPTIONS',
          url: '/api/v1/chat/messages',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type, x-api-key, x-user-hmac, x-user-token',
          },
        });
        expect(res.statusCode).toBe(204);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
        const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
        for (const h of ['content-type', 'x-api-key', 'authorization', 'x-user-hmac', 'x-user-token']) expect(allowed).toContain(h);
        // Sent without the key, a preflight is counted in no bucket and reports none.
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
      const first = await config(auth(p.publicKey, { origin: 'https://shop.example' }));
      const actual = await config(auth(p.publicKey, { origin: 'https://shop.example' }));
      // The two preflights before cost the project's count nothing: only the first read did.
      expect(Number(actual.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-limit']) - 2);
      const exposed = String(actual.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
      expect(exposed).toEqual(
        expect.arrayContaining(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id', 'x-vercel-ai-ui-message-stream', 'etag']),
      );
    });
  });

  describe('identityVerification: "required"', () => {
    let p: CreatedProject;
    const user = 'strict-user';

    // Each test its own project(s): none sees another's rows or rate-limit counts.
    beforeEach(async () => {
      p = await createProject(t, { identityVerification: 'required' });
    });

    const create = (headers: Record<string, string>, payload?: object) =>
      t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey, headers), payload });

    it('refuses creation for an end user without proof and anonymous creation altogether', async () => {
      const wrongUser = opensslHmac(p.hmacSecret, 'someone-else');
      const otherSecret = opensslHmac(a.hmacSecret, user);
      const unproven: Array<Record<string, string>> = [
        {},
        { 'x-user-hmac': wrongUser },
        { 'x-user-hmac': otherSecret },
        { 'x-user-token': signHs256(p.hmacSecret, { sub: 'someone-else' }) },
        { 'x-user-token': 'garbage' },
      ];
      for (const headers of unproven) {
        const res = await create(headers, { endUserExternalId: user });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'Identity verification required' });
      }
      const anonymous = await create({ 'x-user-hmac': opensslHmac(p.hmacSecret, user) });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toEqual({ error: 'Identity verification required' });
      expect(await t.deps.store.db.selectFrom('conversations').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
    });

    it('creates with an x-user-hmac (OpenSSL) or an x-user-token (jsonwebtoken)', async () => {
      const byHmac = await create({ 'x-user-hmac': opensslHmac(p.hmacSecret, user) }, { endUserExternalId: user });
      expect(byHmac.statusCode).toBe(201);
      const byToken = await create({ 'x-user-token': signHs256(p.hmacSecret, { sub: user }) }, { endUserExternalId: user });
      expect(byToken.statusCode).toBe(201);
    });

    it('lists and reads a user-bound conversation only with proof', async () => {
      const created = await create({ 'x-user-hmac': opensslHmac(p.hmacSecret, user) }, { endUserExternalId: user });
      const conversationId = created.json().conversationId as string;
      await appendMessage(t.deps.store.db, { id: conversationId, project_id: p.project.id }, { role: 'user', content: 'hi', status: 'complete' });
      const list = (headers: Record<string, string>) =>
        t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations?userId=${user}`, headers: auth(p.publicKey, headers) });
      const read = (headers: Record<string, string>) =>
        t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(p.publicKey, headers) });
      for (const call of [list, read]) {
        const refused = await call({});
        expect(refused.statusCode).toBe(401);
        expect(refused.json()).toEqual({ error: 'Identity verification required' });
        expect((await call({ 'x-user-hmac': opensslHmac(p.hmacSecret, 'someone-else') })).statusCode).toBe(401);
        expect((await call({ 'x-user-hmac': opensslHmac(p.hmacSecret, user).toUpperCase() })).statusCode).toBe(200);
        expect((await call({ 'x-user-token': signHs256(p.hmacSecret, { sub: user }) })).statusCode).toBe(200);
      }
      const listed = await list({ 'x-user-token': signHs256(p.hmacSecret, { sub: user }) });
      expect(listed.json().conversations.map((c: { id: string }) => c.id)).toEqual([conversationId]);
    });
  });

  describe('cross-project isolation', () => {
    it("never lets project B's keys read, list, rate or send into project A's data", async () => {
      const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey), payload: { endUserExternalId: 'a-user' } });
      const convId = created.json().conversationId as string;
      const msg = await appendMessage(t.deps.store.db, { id: convId, project_id: a.project.id }, { role: 'assistant', content: 'A only', status: 'complete' });

      for (const key of [b.publicKey, b.secretKey]) {
        const read = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${convId}`, headers: auth(key) });
        expect(read.statusCode).toBe(404);
        expect(read.json()).toEqual({ error: 'Conversation not found' });

        const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=a-user', headers: auth(key) });
        expect(list.json()).toEqual({ conversations: [] });

        const rate = await t.app.inject({
          method: 'POST',
          url: '/api/v1/chat/feedback',
          headers: auth(key),
          payload: { conversationId: convId, messageId: msg.id, rating: 'NEGATIVE' },
        });
        expect(rate.statusCode).toBe(404);

        const send = await t.app.inject({
          method: 'POST',
          url: '/api/v1/chat/messages',
          headers: auth(key),
          payload: { conversationId: convId, messages: [{ role: 'user', content: 'let me in' }] },
        });
        expect(send.statusCode).toBe(400);
        expect(send.json()).toEqual({ error: 'Invalid conversation' });

        const namedProject = await t.app.inject({
          method: 'POST',
          url: '/api/v1/chat/messages',
          headers: auth(key),
          payload: { conversationId: convId, projectId: a.project.id, messages: [{ role: 'user', content: 'let me in' }] },
        });
        expect(namedProject.statusCode).toBe(403);
        expect(namedProject.json()).toEqual({ error: 'Project does not match API key' });

        const widget = await config(auth(key));
        expect(widget.json().primaryColor).toBe('#00bb00');

        const verify = await t.app.inject({
          method: 'POST',
          url: '/api/v1/identity/verify',
          headers: auth(key),
          payload: { userId: 'a-user', hmac: opensslHmac(a.hmacSecret, 'a-user') },
        });
        expect(verify.statusCode).toBe(401);
      }
      expect(await t.deps.store.db.selectFrom('feedback').select('id').where('conversation_id', '=', convId).execute()).toEqual([]);
      const history = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${convId}`, headers: auth(a.publicKey) });
      expect(history.json().messages.map((m: { content: string }) => m.content)).toEqual(['A only']);
      expect(await t.deps.store.db.selectFrom('end_users').select('id').where('project_id', '=', b.project.id).execute()).toEqual([]);
    });
  });
});
