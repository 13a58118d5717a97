import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { opensslHmac, signHs256, signRs256, unsignedToken } from '../../../test/identity.js';
import type { CreatedProject } from '../../projects/projects.js';

describe.each(dialects)('identity on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t);
    b = await createProject(t, {}, 'Beta');
  });
  afterAll(() => t.close());

  const verify = (key: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(key), payload: payload as object });
  const identify = (key: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v1/identity/identify', headers: auth(key), payload: payload as object });
  const endUser = (p: CreatedProject, externalId: string) =>
    t.deps.store.db
      .selectFrom('end_users')
      .selectAll()
      .where('project_id', '=', p.project.id)
      .where('external_id', '=', externalId)
      .executeTakeFirst();

  describe('POST /identity/verify', () => {
    it('verifies an HMAC made by openssl and upserts the end user with email, name and verifiedAt', async () => {
      const hmac = opensslHmac(a.hmacSecret, 'user-7');
      const res = await verify(a.publicKey, { userId: 'user-7', hmac, email: 'ada@example.com', name: 'Ada' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('{"verified":true}');
      expect(await endUser(a, 'user-7')).toMatchObject({
        email: 'ada@example.com',
        name: 'Ada',
        verified_at: expect.stringMatching(/Z$/),
      });
    });

    it('accepts upper-case hex and updates an end user first seen unverified', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/conversations',
        headers: auth(a.publicKey),
        payload: { endUserExternalId: 'ünï côde' },
      });
      expect(created.statusCode).toBe(201);
      const before = await endUser(a, 'ünï côde');
      expect(before).toMatchObject({ verified_at: null, email: null });
      const res = await verify(a.secretKey, { userId: 'ünï côde', hmac: opensslHmac(a.hmacSecret, 'ünï côde').toUpperCase(), name: 'Ünï' });
      expect(res.statusCode).toBe(200);
      const after = await endUser(a, 'ünï côde');
      expect(after).toMatchObject({ id: before!.id, name: 'Ünï', email: null, verified_at: expect.any(String) });
    });

    it('refuses a wrong signature with 401 {verified:false,error:"Invalid HMAC signature"} and stores nothing', async () => {
      const bad = [
        opensslHmac(a.hmacSecret, 'someone-else'),
        opensslHmac(b.hmacSecret, 'mallory'),
        opensslHmac(a.hmacSecret, 'mallory').slice(0, 63),
        'not-hex',
      ];
      for (const hmac of bad) {
        const res = await verify(a.publicKey, { userId: 'mallory', hmac });
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe('{"verified":false,"error":"Invalid HMAC signature"}');
      }
      expect(await endUser(a, 'mallory')).toBeUndefined();
    });

    it("refuses a signature made with another project's secret when sent with that project's key", async () => {
      const res = await verify(b.publicKey, { userId: 'cross', hmac: opensslHmac(a.hmacSecret, 'cross') });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ verified: false, error: 'Invalid HMAC signature' });
      expect(await endUser(a, 'cross')).toBeUndefined();
      expect(await endUser(b, 'cross')).toBeUndefined();
    });

    it('answers a bad body with 400 {verified:false,error:"Validation error"}', async () => {
      const hmac = opensslHmac(a.hmacSecret, 'v');
      for (const payload of [
        { hmac },
        { userId: 'v' },
        { userId: '', hmac },
        { userId: 'x'.repeat(257), hmac },
        { userId: 'v', hmac, email: 'not-an-email' },
        { userId: 'v', hmac, name: 'n'.repeat(257) },
      ]) {
        const res = await verify(a.publicKey, payload);
        expect(res.statusCode).toBe(400);
        expect(res.body).toBe('{"verified":false,"error":"Validation error"}');
      }
      const malformed = await t.app.inject({
        method: 'POST',
        url: '/api/v1/identity/verify',
        headers: auth(a.publicKey, { 'content-type': 'application/json' }),
        payload: '{"userId":',
      });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toEqual({ verified: false, error: 'Validation error' });
      expect(await endUser(a, 'v')).toBeUndefined();
    });

    it('answers a missing key with the plain 401 {error:"Unauthorized"}', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', payload: { userId: 'u', hmac: 'aa' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Unauthorized' });
    });
  });

  describe('POST /identity/identify', () => {
    it('verifies an HS256 token made by jsonwebtoken and upserts the end user from its claims', async () => {
      const token = signHs256(a.hmacSecret, { sub: 'jwt-user', email: 'grace@example.com', name: 'Grace' });
      const res = await identify(a.publicKey, { token });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ verified: true, user: { id: 'jwt-user', email: 'grace@example.com', name: 'Grace' } });
      expect(await endUser(a, 'jwt-user')).toMatchObject({ email: 'grace@example.com', name: 'Grace', verified_at: expect.any(String) });
    });

    it('keeps stored email and name when a later token carries only sub', async () => {
      await identify(a.publicKey, { token: signHs256(a.hmacSecret, { sub: 'sparse', email: 's@example.com', name: 'S' }) });
      const res = await identify(a.publicKey, { token: signHs256(a.hmacSecret, { sub: 'sparse' }) });
      expect(res.json()).toEqual({ verified: true, user: { id: 'sparse', email: 's@example.com', name: 'S' } });
      const bare = await identify(a.publicKey, { token: signHs256(a.hmacSecret, { sub: 'bare' }) });
      expect(bare.json()).toEqual({ verified: true, user: { id: 'bare' } });
    });

    it('leaves out an email claim that is no e-mail address, and refuses claims holding half a surrogate pair', async () => {
      const res = await identify(a.publicKey, { token: signHs256(a.hmacSecret, { sub: 'odd-mail', email: 'not-an-email', name: 'Odd' }) });
      expect(res.json()).toEqual({ verified: true, user: { id: 'odd-mail', name: 'Odd' } });
      expect(await endUser(a, 'odd-mail')).toMatchObject({ email: null, name: 'Odd' });
      // JSON.stringify writes the lone surrogate as \ud800: the token is well formed, its claim is no text.
      for (const claims of [{ sub: 's\ud800' }, { sub: 'ok-sub', name: 'N\udc00' }]) {
        const refused = await identify(a.publicKey, { token: signHs256(a.hmacSecret, claims) });
        expect(refused.statusCode).toBe(401);
        expect(refused.json().verified).toBe(false);
      }
      expect(await endUser(a, 'ok-sub')).toBeUndefined();
    });

    it('honours exp and nbf with 30 s of clock tolerance', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const justExpired = signHs256(a.hmacSecret, { sub: 'skew', exp: nowS - 5 });
      expect((await identify(a.publicKey, { token: justExpired })).statusCode).toBe(200);
      const notYet = signHs256(a.hmacSecret, { sub: 'early', nbf: nowS + 300 });
      const res = await identify(a.publicKey, { token: notYet });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ verified: false, error: 'Invalid identity token' });
    });

    it('requires exp: a token without one would be valid forever', async () => {
      // jsonwebtoken adds iat but no exp unless asked to.
      const forever = jwt.sign({ sub: 'forever', email: 'f@example.com' }, a.hmacSecret, { algorithm: 'HS256' });
      expect(jwt.decode(forever)).not.toHaveProperty('exp');
      const res = await identify(a.publicKey, { token: forever });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ verified: false, error: 'Invalid identity token' });
      expect(await endUser(a, 'forever')).toBeUndefined();
      // Nor does it prove an identity in x-user-token.
      const p = await createProject(t, { identityVerification: 'required' });
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/conversations',
        headers: auth(p.publicKey, { 'x-user-token': jwt.sign({ sub: 'forever' }, p.hmacSecret, { algorithm: 'HS256' }) }),
        payload: { endUserExternalId: 'forever' },
      });
      expect(created.statusCode).toBe(401);
      expect(created.json()).toEqual({ error: 'Identity verification required' });
    });

    it('refuses an iat in the future beyond the 30 s tolerance', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const issuedAt = (sub: string, ahead: number) =>
        jwt.sign({ sub, iat: nowS + ahead, exp: nowS + ahead + 300 }, a.hmacSecret, { algorithm: 'HS256' });
      for (const [sub, ahead] of [['next-year', 365 * 24 * 3600], ['next-hour', 3600], ['a-minute', 60]] as const) {
        const res = await identify(a.publicKey, { token: issuedAt(sub, ahead) });
        expect({ sub, status: res.statusCode, body: res.json() }).toEqual({ sub, status: 401, body: { verified: false, error: 'Invalid identity token' } });
        expect(await endUser(a, sub)).toBeUndefined();
      }
      // A clock a little ahead of ours is within the tolerance.
      expect((await identify(a.publicKey, { token: issuedAt('skewed-clock', 20) })).statusCode).toBe(200);
    });

    it('refuses alg none, RS256, HS512, expired, sub-less, wrong-secret and garbage tokens', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const tokens: Record<string, string> = {
        none: unsignedToken({ sub: 'evil' }),
        rs256: signRs256({ sub: 'evil' }),
        hs512: jwt.sign({ sub: 'evil' }, a.hmacSecret, { algorithm: 'HS512' }),
        expired: signHs256(a.hmacSecret, { sub: 'evil', exp: nowS - 3600 }),
        noSub: signHs256(a.hmacSecret, { email: 'evil@example.com' }),
        emptySub: signHs256(a.hmacSecret, { sub: '' }),
        wrongSecret: signHs256('ad_hs_not-the-project-secret-at-all-000000', { sub: 'evil' }),
        otherProject: signHs256(b.hmacSecret, { sub: 'evil' }),
        garbage: 'not.a.jwt',
      };
      for (const [name, token] of Object.entries(tokens)) {
        const res = await identify(a.publicKey, { token });
        expect({ name, status: res.statusCode, body: res.body }).toEqual({
          name,
          status: 401,
          body: '{"verified":false,"error":"Invalid identity token"}',
        });
      }
      expect(await endUser(a, 'evil')).toBeUndefined();
    });

    it('answers a missing token with 400 {verified:false,error:"Validation error"}', async () => {
      for (const payload of [{}, { token: '' }, { token: 42 }]) {
        const res = await identify(a.publicKey, payload);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ verified: false, error: 'Validation error' });
      }
    });
  });
});
