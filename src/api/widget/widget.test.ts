import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { newId } from '../../lib/ids.js';
import { updateProject, type CreatedProject } from '../../projects/projects.js';
import { WIDGET_DEFAULTS, type WidgetConfig } from './schema.js';

/** What a project that says nothing about handoff offers: the button, no office-hours text. */
const HANDOFF_DEFAULTS = { enabled: true, officeHoursText: null };

describe.each(dialects)('widget config on $name', (dialect) => {
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

  const get = (key: string, headers: Record<string, string> = {}, app = t.app) =>
    app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(key, headers) });

  /** A skill row as the admin API stores it; `at` pins creation order without waiting on the clock. */
  async function addSkill(p: CreatedProject, name: string, enabled: boolean, at: string) {
    const row = {
      id: newId('skill'),
      project_id: p.project.id,
      name,
      description: `${name} description`,
      instructions: 'internal instructions, never sent to the widget',
      enabled: enabled ? 1 : 0,
      created_at: at,
      updated_at: at,
    };
    await t.deps.store.db.insertInto('skills').values(row).execute();
    return row;
  }

  it('serves the defaults and no skills for a project that customised nothing', async () => {
    const res = await get(a.publicKey);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json() as WidgetConfig;
    expect(body).toEqual({ ...WIDGET_DEFAULTS, availableSkills: [], handoff: HANDOFF_DEFAULTS });
    expect(body).toMatchObject({ showBranding: true, position: 'bottom-right', bgColor: '#ffffff', fabText: '' });
    expect(body.fabIcon).toMatch(/^data:image\/svg\+xml,/);
  });

  it('merges the project widget settings over the defaults and lists enabled skills oldest first', async () => {
    const p = await createProject(t, { widget: { primaryColor: '#ff6600', position: 'bottom-left', fabText: 'Help', showBranding: false } });
    const other = await createProject(t, {}, 'Other');
    const second = await addSkill(p, 'Track an order', true, '2024-01-02T00:00:00.000Z');
    const first = await addSkill(p, 'Start a return', true, '2024-01-01T00:00:00.000Z');
    await addSkill(p, 'Disabled skill', false, '2024-01-03T00:00:00.000Z');
    await addSkill(other, 'Foreign skill', true, '2024-01-01T00:00:00.000Z');

    const res = await get(p.publicKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...WIDGET_DEFAULTS,
      primaryColor: '#ff6600',
      position: 'bottom-left',
      fabText: 'Help',
      showBranding: false,
      handoff: HANDOFF_DEFAULTS,
      availableSkills: [
        { id: first.id, name: 'Start a return', description: 'Start a return description' },
        { id: second.id, name: 'Track an order', description: 'Track an order description' },
      ],
    });
    const foreign = await get(other.publicKey);
    expect(foreign.json().availableSkills.map((s: { name: string }) => s.name)).toEqual(['Foreign skill']);
  });

  it('sends a strong ETag that is the hash of the exact body bytes', async () => {
    const res = await get(a.publicKey);
    const expected = `"${createHash('sha256').update(res.rawPayload).digest('base64url')}"`;
    expect(res.headers.etag).toBe(expected);
    expect(res.headers['cache-control']).toBe('no-cache');
    const again = await get(a.secretKey);
    expect(again.headers.etag).toBe(expected);
    const b = await createProject(t, { widget: { primaryColor: '#000000' } }, 'Beta');
    expect((await get(b.publicKey)).headers.etag).not.toBe(expected);
  });

  it('answers If-None-Match with 304, no body, the ETag and the rate-limit headers', async () => {
    const { etag } = (await get(a.publicKey)).headers as { etag: string };
    for (const header of [etag, `W/${etag}`, `"stale", ${etag}`, '*']) {
      const res = await get(a.publicKey, { 'if-none-match': header });
      expect(res.statusCode).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    }
    const stale = await get(a.publicKey, { 'if-none-match': '"stale"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.json()).toEqual({ ...WIDGET_DEFAULTS, availableSkills: [], handoff: HANDOFF_DEFAULTS });
  });

  it('changes the ETag when settings or skills change, also when the change is made through another node', async () => {
    const p = await createProject(t);
    // A second app on the same database: a change made anywhere must show on every node.
    const node2 = await createTestApp({ dialect, store: t.deps.store });
    try {
      // Each step revalidates with the previous ETag and must get the new content, not a 304.
      let before: string | undefined;
      const check = async (expectChange: (body: WidgetConfig) => void) => {
        const res = await get(p.publicKey, before ? { 'if-none-match': before } : {}, node2.app);
        expect(res.statusCode).toBe(200);
        expectChange(res.json());
        expect(res.headers.etag).not.toBe(before);
        before = res.headers.etag as string;
      };
      await check((body) => expect(body.availableSkills).toEqual([]));

      await updateProject(t.deps.store.db, p.project.id, { settings: { widget: { primaryColor: '#123456' } } });
      await check((body) => expect(body.primaryColor).toBe('#123456'));

      const skill = await addSkill(p, 'Reset password', true, '2024-01-01T00:00:00.000Z');
      await check((body) => expect(body.availableSkills).toEqual([{ id: skill.id, name: 'Reset password', description: 'Reset password description' }]));

      // Same updated_at as before: the cached copy must not be trusted on timestamps alone.
      await t.deps.store.db.updateTable('skills').set({ description: 'Get a reset link' }).where('id', '=', skill.id).execute();
      await check((body) => expect(body.availableSkills[0].description).toBe('Get a reset link'));

      await t.deps.store.db.updateTable('skills').set({ enabled: 0 }).where('id', '=', skill.id).execute();
      await check((body) => expect(body.availableSkills).toEqual([]));
    } finally {
      await node2.close();
    }
  });

  it('answers 401 {error:"Unauthorized"} without a key, with the rate-limit headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Unauthorized' });
    expect(res.headers['x-ratelimit-limit']).toBe('60');
  });
});
