import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { waitFor } from '../../../test/wait.js';
import { hashKey, signUserId } from '../../lib/keys.js';
import { secretBox } from '../../lib/secret-box.js';
import { hmacSecretContext } from '../../projects/hmac-secret.js';
import type { z } from 'zod';
import type { keyCreated, projectCreated } from './admin-schema.js';

type Created = z.infer<typeof projectCreated>;

describe.each(dialects)('admin API: projects and keys on $name', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(() => t.close());

  async function create(name = 'Acme', settings?: object): Promise<Created> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: adminAuth(), payload: { name, settings } });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  /** The stored HMAC secret: sealed, bound to its project; opened with the app's key. */
  const storedHmacSecret = async (projectId: string) => {
    const row = await t.deps.store.db.selectFrom('projects').select('hmac_secret').where('id', '=', projectId).executeTakeFirstOrThrow();
    expect(row.hmac_secret).not.toContain('ad_hs_');
    return secretBox(t.config).open(row.hmac_secret, hmacSecretContext(projectId));
  };

  it('creates a project with keys and HMAC secret, storing only key hashes and the secret sealed', async () => {
    const body = await create('Acme Support', { conversationTtlMinutes: 60, widget: { primaryColor: '#111111' } });
    expect(body.project).toMatchObject({ name: 'Acme Support', settings: { conversationTtlMinutes: 60, widget: { primaryColor: '#111111' } } });
    expect(body.project.id).toMatch(/^proj_[0-9A-Za-z]{22}$/);
    expect(body.publicKey).toMatch(/^ad_pk_[0-9A-Za-z]{32}$/);
    expect(body.secretKey).toMatch(/^ad_sk_[0-9A-Za-z]{40}$/);
    expect(body.hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
    const keys = await t.deps.store.db.selectFrom('api_keys').selectAll().where('project_id', '=', body.project.id).execute();
    expect(keys.map((k) => k.hash).sort()).toEqual([hashKey(body.publicKey), hashKey(body.secretKey)].sort());
    expect(JSON.stringify(keys)).not.toContain(body.secretKey);
    expect(await storedHmacSecret(body.project.id)).toBe(body.hmacSecret);
    // The new keys work at once.
    const runtime = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(body.publicKey) });
    expect(runtime.statusCode).toBe(201);
  });

  it('records when a key was last used, at most once a minute', async () => {
    const p = await create('Key use');
    const lastUsed = async () =>
      (await t.deps.store.db.selectFrom('api_keys').select('last_used_at').where('hash', '=', hashKey(p.publicKey)).executeTakeFirstOrThrow()).last_used_at;
    expect(await lastUsed()).toBeNull();
    const call = () => t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expect((await call()).statusCode).toBe(200);
    const first = await waitFor(lastUsed, 10_000, 'the key use to be recorded');
    expect(Date.parse(first)).toBeGreaterThan(Date.now() - 60_000);
    expect(new Date(Date.parse(first)).toISOString()).toBe(first);
    // A second call within the minute writes nothing: the stored time stays the first one.
    expect((await call()).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(await lastUsed()).toBe(first);
    const listed = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers: adminAuth() });
    expect(listed.json().keys.find((k: { kind: string }) => k.kind === 'public').lastUsedAt).toBe(first);
  });

  it('validates the create body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: adminAuth(), payload: { name: '', settings: { conversationTtlMinutes: 0 } } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error).toBe('Validation error');
    expect(body.details.map((d: { path: string }) => d.path).sort()).toEqual(['name', 'settings.conversationTtlMinutes']);
    const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: adminAuth(), payload: { name: 'x', settings: { colour: 'red' } } });
    expect(unknown.statusCode).toBe(400);
  });

  it('lets only the instance admin create projects', async () => {
    const p = await create();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: auth(p.secretKey), payload: { name: 'Sneaky' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Only the instance admin can create projects' });
    const count = await t.deps.store.db.selectFrom('projects').select((eb) => eb.fn.countAll().as('n')).where('name', '=', 'Sneaky').executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('lists every project for the admin and only its own for a secret key', async () => {
    const a = await create('List A');
    const b = await create('List B');
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers: adminAuth() });
    expect(all.statusCode).toBe(200);
    const ids = all.json().projects.map((p: { id: string }) => p.id);
    expect(ids).toEqual(expect.arrayContaining([a.project.id, b.project.id]));
    const own = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers: { authorization: `Bearer ${a.secretKey}` } });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toEqual({ projects: [a.project] });
  });

  it('reads, patches (one-level merge) and deletes a project', async () => {
    const p = await create('Patch me', { widget: { primaryColor: '#222222', position: 'bottom-left' }, instructions: 'Be brief.' });
    const id = p.project.id;
    const read = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}`, headers: adminAuth() });
    expect(read.json()).toEqual({ project: p.project });

    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/projects/${id}`,
      headers: auth(p.secretKey),
      payload: { name: 'Patched', settings: { widget: { primaryColor: '#333333' }, identityVerification: 'required' } },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().project).toMatchObject({
      name: 'Patched',
      settings: { widget: { primaryColor: '#333333', position: 'bottom-left' }, instructions: 'Be brief.', identityVerification: 'required' },
    });
    const row = await t.deps.store.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings)).toEqual({ widget: { primaryColor: '#333333', position: 'bottom-left' }, instructions: 'Be brief.', identityVerification: 'required' });

    const bad = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${id}`, headers: adminAuth(), payload: { settings: { widget: { position: 'top' } } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'settings.widget.position' }] });

    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${id}`, headers: adminAuth() });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect(await t.deps.store.db.selectFrom('projects').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect(await t.deps.store.db.selectFrom('api_keys').select('id').where('project_id', '=', id).execute()).toEqual([]);
    const again = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}`, headers: adminAuth() });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: 'Project not found' });
    // The deleted project's keys are gone with it.
    const stale = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expect(stale.statusCode).toBe(401);
  });

  it('removes a setting patched to null, so its default applies again, and keeps the others', async () => {
    const p = await create('Reset me', { model: 'builtin', conversationTtlMinutes: 60, instructions: 'Be brief.', rateLimits: { chat: 45 } });
    const id = p.project.id;
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/projects/${id}`,
      headers: auth(p.secretKey),
      payload: { settings: { model: null, conversationTtlMinutes: null, rateLimits: { session: 5 } } },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().project.settings).toEqual({ instructions: 'Be brief.', rateLimits: { chat: 45, session: 5 } });
    const row = await t.deps.store.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings)).toEqual({ instructions: 'Be brief.', rateLimits: { chat: 45, session: 5 } });

    // An object setting goes as a whole; a key the project never set is no error.
    const whole = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${id}`, headers: adminAuth(), payload: { settings: { rateLimits: null, widget: null } } });
    expect(whole.statusCode).toBe(200);
    expect(whole.json().project.settings).toEqual({ instructions: 'Be brief.' });

    // null removes a whole setting only: inside one, and on create, it is still refused.
    const nested = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${id}`, headers: adminAuth(), payload: { settings: { rateLimits: { chat: null } } } });
    expect(nested.statusCode).toBe(400);
    expect(nested.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'settings.rateLimits.chat' }] });
    const onCreate = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: adminAuth(), payload: { name: 'Null', settings: { model: null } } });
    expect(onCreate.statusCode).toBe(400);
    expect(onCreate.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'settings.model' }] });
  });

  it('answers 404 Project not found for unknown ids on every project route', async () => {
    const routes: Array<[string, string, object?]> = [
      ['GET', ''],
      ['PATCH', '', { name: 'x' }],
      ['DELETE', ''],
      ['POST', '/keys', {}],
      ['GET', '/keys'],
      ['DELETE', '/keys/key_nope'],
      ['POST', '/hmac-secret/rotate'],
    ];
    for (const [method, suffix, payload] of routes) {
      const res = await t.app.inject({ method: method as 'GET', url: `/api/v1/admin/projects/proj_unknown${suffix}`, headers: adminAuth(), payload });
      expect([method, suffix, res.statusCode]).toEqual([method, suffix, 404]);
      expect(res.json()).toEqual({ error: 'Project not found' });
    }
  });

  it('creates, lists and revokes keys; a revoked key gets 401 everywhere', async () => {
    const p = await create('Keys');
    const id = p.project.id;
    const made = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${id}/keys`, headers: adminAuth(), payload: { kind: 'secret', name: 'CI deploy' } });
    expect(made.statusCode).toBe(201);
    const { key, secret } = made.json() as z.infer<typeof keyCreated>;
    expect(secret).toMatch(/^ad_sk_[0-9A-Za-z]{40}$/);
    expect(key).toMatchObject({ projectId: id, kind: 'secret', name: 'CI deploy', revokedAt: null, lastUsedAt: null });
    expect(key.prefix).toBe(`${secret.slice(0, 10)}…${secret.slice(-4)}`);
    const stored = await t.deps.store.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(stored.hash).toBe(hashKey(secret));

    const defaultKind = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${id}/keys`, headers: adminAuth() });
    expect(defaultKind.statusCode).toBe(201);
    expect(defaultKind.json().key.kind).toBe('public');
    expect(defaultKind.json().secret).toMatch(/^ad_pk_/);
    const badKind = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${id}/keys`, headers: adminAuth(), payload: { kind: 'root' } });
    expect(badKind.statusCode).toBe(400);

    // The new secret key administers its project.
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}/keys`, headers: auth(secret) });
    expect(list.statusCode).toBe(200);
    const keys = list.json().keys;
    expect(keys).toHaveLength(4);
    expect(JSON.stringify(keys)).not.toContain(secret);
    expect(keys.map((k: { id: string }) => k.id)).toContain(key.id);

    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${id}/keys/${key.id}`, headers: adminAuth() });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().key).toMatchObject({ id: key.id, revokedAt: expect.stringMatching(/Z$/) });
    const row = await t.deps.store.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBe(revoked.json().key.revokedAt);

    for (const [method, url] of [
      ['GET', `/api/v1/admin/projects/${id}/keys`],
      ['GET', '/api/v1/admin/projects'],
      ['GET', '/api/v1/widget/config'],
      ['POST', '/api/v1/chat/conversations'],
      ['GET', '/api/v1/chat/conversations?userId=u1'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: auth(secret) });
      expect([url, res.statusCode]).toEqual([url, 401]);
      expect(res.json()).toEqual({ error: 'Unauthorized' });
    }
    // Revoking a public key shuts the runtime API too.
    const pubId = keys.find((k: { kind: string; name: string }) => k.kind === 'public' && k.name === 'Default public key').id;
    await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${id}/keys/${pubId}`, headers: adminAuth() });
    const pubRes = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    expect(pubRes.statusCode).toBe(401);

    const unknown = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${id}/keys/key_nope`, headers: adminAuth() });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Key not found' });
  });

  it('rotates the HMAC secret: old signatures stop verifying, new ones verify', async () => {
    const p = await create('Rotate');
    const old = signUserId(p.hmacSecret, 'user-7');
    const before = await t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(p.publicKey), payload: { userId: 'user-7', hmac: old } });
    expect(before.json()).toEqual({ verified: true });

    const rotated = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/hmac-secret/rotate`, headers: auth(p.secretKey) });
    expect(rotated.statusCode).toBe(200);
    const { hmacSecret } = rotated.json();
    expect(hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
    expect(hmacSecret).not.toBe(p.hmacSecret);
    expect(await storedHmacSecret(p.project.id)).toBe(hmacSecret);

    const after = await t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(p.publicKey), payload: { userId: 'user-7', hmac: old } });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ verified: false, error: 'Invalid HMAC signature' });
    const fresh = await t.app.inject({
      method: 'POST',
      url: '/api/v1/identity/verify',
      headers: auth(p.publicKey),
      payload: { userId: 'user-7', hmac: signUserId(hmacSecret, 'user-7') },
    });
    expect(fresh.json()).toEqual({ verified: true });
  });

  it("keeps a secret key out of another project's admin resources (404) and public keys out of admin (401)", async () => {
    const a = await create('Iso A');
    const b = await create('Iso B');
    const bKeys = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${b.project.id}/keys`, headers: adminAuth() });
    const bKeyId = bKeys.json().keys[0].id;
    const foreign: Array<[string, string, object?]> = [
      ['GET', ''],
      ['PATCH', '', { name: 'hijacked' }],
      ['DELETE', ''],
      ['POST', '/keys', { kind: 'secret' }],
      ['GET', '/keys'],
      ['DELETE', `/keys/${bKeyId}`],
      ['POST', '/hmac-secret/rotate'],
    ];
    for (const [method, suffix, payload] of foreign) {
      const res = await t.app.inject({ method: method as 'GET', url: `/api/v1/admin/projects/${b.project.id}${suffix}`, headers: auth(a.secretKey), payload });
      expect([method, suffix, res.statusCode]).toEqual([method, suffix, 404]);
      expect(res.json()).toEqual({ error: 'Project not found' });
    }
    const untouched = await t.deps.store.db.selectFrom('projects').selectAll().where('id', '=', b.project.id).executeTakeFirstOrThrow();
    expect(untouched).toMatchObject({ name: 'Iso B' });
    expect(await storedHmacSecret(b.project.id)).toBe(b.hmacSecret);
    const bKeyRows = await t.deps.store.db.selectFrom('api_keys').selectAll().where('project_id', '=', b.project.id).execute();
    expect(bKeyRows).toHaveLength(2);
    expect(bKeyRows.every((k) => k.revoked_at === null)).toBe(true);

    for (const headers of [auth(a.publicKey), {}, auth('ad_sk_' + 'x'.repeat(40)), auth('not-a-key')]) {
      for (const url of ['/api/v1/admin/projects', `/api/v1/admin/projects/${a.project.id}`, `/api/v1/admin/projects/${a.project.id}/keys`]) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        expect([url, res.statusCode]).toEqual([url, 401]);
        expect(res.json()).toEqual({ error: 'Unauthorized' });
      }
    }
  });

  it('counts admin calls in the admin bucket (600/min per credential), with headers on errors too', async () => {
    const p = await create('Bucket');
    const first = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers: auth(p.secretKey) });
    expect(first.headers['x-ratelimit-limit']).toBe('600');
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    expect(remaining).toBe(599);
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    const second = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/proj_unknown`, headers: auth(p.secretKey) });
    expect(second.statusCode).toBe(404);
    expect(second.headers['x-ratelimit-limit']).toBe('600');
    expect(second.headers['x-ratelimit-remaining']).toBe(String(remaining - 1));
    // A project's runtime limit override does not apply to its admin calls.
    await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}`, headers: adminAuth(), payload: { settings: { rateLimits: { general: 5 } } } });
    const third = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers: auth(p.secretKey) });
    expect(third.headers['x-ratelimit-limit']).toBe('600');
  });

  it('documents every admin route in the OpenAPI document under the projects tag', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const paths = [
      '/api/v1/admin/projects',
      '/api/v1/admin/projects/{projectId}',
      '/api/v1/admin/projects/{projectId}/keys',
      '/api/v1/admin/projects/{projectId}/keys/{keyId}',
      '/api/v1/admin/projects/{projectId}/hmac-secret/rotate',
    ];
    for (const path of paths) {
      expect(doc.paths[path], path).toBeDefined();
      for (const op of Object.values(doc.paths[path]) as Array<{ tags: string[] }>) expect(op.tags).toEqual(['projects']);
    }
    expect(doc.paths['/api/v1/admin/projects'].post.responses['201']).toBeDefined();
  });
});
