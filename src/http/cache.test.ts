import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import { widgetConfigSource, type SerializedConfig } from '../api/widget/service.js';
import { TtlCache } from '../lib/ttl-cache.js';

/**
 * The per-node caches (key → project, a project's skills and actions) with caching on, as in production: admin
 * writes on a node take effect there at once; writes elsewhere (another node, the CLI) within the TTL.
 */
describe.each(dialects)('per-node caches on $name', (dialect) => {
  let a: TestApp;
  let b: TestApp;
  const TTL = 400;

  beforeAll(async () => {
    a = await createTestApp({ dialect, env: { ANSWERDESK_CACHE_TTL_MS: String(TTL) } });
    // A second node on the same database.
    b = await createTestApp({ dialect, store: a.deps.store, env: { ANSWERDESK_CACHE_TTL_MS: String(TTL) } });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const config = (t: TestApp, key: string) => t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(key) });

  it('refuses a key revoked on this node at once, and on another node within the TTL', async () => {
    const p = await createProject(a);
    expect((await config(a, p.publicKey)).statusCode).toBe(200);
    expect((await config(b, p.publicKey)).statusCode).toBe(200);
    const keys = (await a.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers: adminAuth() })).json().keys;
    const pub = keys.find((k: { kind: string }) => k.kind === 'public');
    const revoked = await a.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${p.project.id}/keys/${pub.id}`, headers: adminAuth() });
    expect(revoked.statusCode).toBe(200);

    expect((await config(a, p.publicKey)).statusCode).toBe(401);
    await new Promise((r) => setTimeout(r, TTL + 50));
    expect((await config(b, p.publicKey)).statusCode).toBe(401);
  });

  it('shows settings and skill changes made on this node at once', async () => {
    const p = await createProject(a);
    expect((await config(a, p.publicKey)).json()).toMatchObject({ primaryColor: expect.any(String), availableSkills: [] });
    await a.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/projects/${p.project.id}`,
      headers: adminAuth(),
      payload: { settings: { widget: { primaryColor: '#123456' } } },
    });
    const created = await a.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/skills`,
      headers: adminAuth(),
      payload: { name: 'Returns', description: 'Start a return', instructions: 'Ask for the order number.', enabled: true },
    });
    expect(created.statusCode).toBe(201);
    expect((await config(a, p.publicKey)).json()).toMatchObject({
      primaryColor: '#123456',
      availableSkills: [{ name: 'Returns', description: 'Start a return' }],
    });
  });

  it('keeps its caches through reads and CORS preflights; an admin write on the node still clears them', async () => {
    // A node whose caches outlive the test, so only a clear can show the change.
    const c = await createTestApp({ dialect, store: a.deps.store, env: { ANSWERDESK_CACHE_TTL_MS: '60000' } });
    try {
      const p = await createProject(a);
      expect((await config(c, p.publicKey)).json().availableSkills).toEqual([]);
      const at = new Date().toISOString();
      await a.deps.store.db
        .insertInto('skills')
        .values({ id: 'skill_pre0000000000000000000', project_id: p.project.id, name: 'Direct skill', description: 'd', instructions: 'i', enabled: 1, created_at: at, updated_at: at })
        .execute();
      // What a browser sends before the widget's first call from a shop's own origin.
      const preflight = await c.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/widget/config',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://shop.example');
      const list = await c.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/skills`, headers: adminAuth() });
      expect(list.statusCode).toBe(200);
      expect((await config(c, p.publicKey)).json().availableSkills).toEqual([]);

      const patched = await c.app.inject({
        method: 'PATCH',
        url: `/api/v1/admin/projects/${p.project.id}`,
        headers: adminAuth(),
        payload: { settings: { widget: { fabText: 'Help' } } },
      });
      expect(patched.statusCode).toBe(200);
      expect((await config(c, p.publicKey)).json()).toMatchObject({
        fabText: 'Help',
        availableSkills: [{ id: 'skill_pre0000000000000000000', name: 'Direct skill', description: 'd' }],
      });
    } finally {
      await c.close();
    }
  });

  it("offers the agent the project's actions as this node's last admin write left them; another node's write within the TTL", async () => {
    // A node whose caches outlive the test, so only an admin write on it can show the change.
    const c = await createTestApp({ dialect, store: a.deps.store, env: { ANSWERDESK_CACHE_TTL_MS: '60000' } });
    try {
      const p = await createProject(a);
      /** What the builtin model says it can do: it names the actions it was offered. */
      const abilities = async (t: TestApp) => {
        const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/chat/messages',
          headers: auth(p.publicKey),
          payload: { conversationId: conv.json().conversationId, messages: [{ role: 'user', content: 'What can you do?' }] },
        });
        expect(res.statusCode).toBe(200);
        return streamedText((await parseAnswer(res.body)).chunks);
      };
      expect(await abilities(c)).not.toContain('track order');

      const created = await a.app.inject({
        method: 'POST',
        url: `/api/v1/admin/projects/${p.project.id}/actions`,
        headers: adminAuth(),
        payload: {
          name: 'track_order',
          description: 'Look up where an order is.',
          url: 'https://shop.example/orders/{orderNumber}',
          parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      // The node that wrote offers it at once; the other still answers from its cache.
      expect(await abilities(a)).toContain('track order');
      expect(await abilities(c)).not.toContain('track order');

      const patched = await c.app.inject({
        method: 'PATCH',
        url: `/api/v1/admin/projects/${p.project.id}`,
        headers: adminAuth(),
        payload: { settings: { widget: { fabText: 'Help' } } },
      });
      expect(patched.statusCode).toBe(200);
      expect(await abilities(c)).toContain('track order');
    } finally {
      await c.close();
    }
  });

  it('picks up a change written straight to the database once the TTL has passed', async () => {
    const p = await createProject(a);
    expect((await config(a, p.publicKey)).json().availableSkills).toEqual([]);
    const at = new Date().toISOString();
    await a.deps.store.db
      .insertInto('skills')
      .values({ id: 'skill_cli0000000000000000000', project_id: p.project.id, name: 'CLI skill', description: 'd', instructions: 'i', enabled: 1, created_at: at, updated_at: at })
      .execute();
    await new Promise((r) => setTimeout(r, TTL + 50));
    expect((await config(a, p.publicKey)).json().availableSkills).toEqual([{ id: 'skill_cli0000000000000000000', name: 'CLI skill', description: 'd' }]);
  });

  it('does not store a value read before an admin write cleared the cache', async () => {
    // The race the dashboard's widget page hit: its preview read the config while "Save" was being
    // written; the read finished after the save had cleared the caches and put the old config
    // back for a whole TTL.
    const p = await createProject(a, { widget: { fabText: 'Old' } });
    const cache = new TtlCache<SerializedConfig>(60_000);
    const configOf = widgetConfigSource(a.deps.store.db, cache);
    const key = `${p.project.id}:${p.project.updatedAt}`;
    const inFlight = configOf(p.project);
    expect(inFlight).toBeInstanceOf(Promise); // a miss: the skills are being read
    cache.clear(); // an admin write commits meanwhile
    expect(JSON.parse((await inFlight).body.toString())).toMatchObject({ fabText: 'Old' });
    expect(cache.get(key)).toBeUndefined();
    // Read after the clear, the value is kept as before.
    await configOf(p.project);
    expect(cache.get(key)).toBeDefined();
  });
});
