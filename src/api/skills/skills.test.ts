import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { Skill } from './schema.js';

describe.each(dialects)('admin API: skills on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;
  const url = (p: CreatedProject, suffix = '') => `/api/v1/admin/projects/${p.project.id}/skills${suffix}`;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t);
    b = await createProject(t, {}, 'Beta');
  });
  afterAll(() => t.close());

  async function create(p: CreatedProject, payload: object): Promise<Skill> {
    const res = await t.app.inject({ method: 'POST', url: url(p), headers: adminAuth(), payload });
    expect(res.statusCode).toBe(201);
    return res.json().skill;
  }

  it('creates a skill with defaults and stores it', async () => {
    const skill = await create(a, { name: '  Track an order ', description: 'Where is my parcel?', instructions: 'Ask for the order number.' });
    expect(skill).toMatchObject({ projectId: a.project.id, name: 'Track an order', description: 'Where is my parcel?', enabled: true });
    expect(skill.id).toMatch(/^skill_[0-9A-Za-z]{22}$/);
    const row = await t.deps.store.db.selectFrom('skills').selectAll().where('id', '=', skill.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ project_id: a.project.id, name: 'Track an order', instructions: 'Ask for the order number.', enabled: 1 });
    const minimal = await create(a, { name: 'Minimal' });
    expect(minimal).toMatchObject({ description: '', instructions: '', enabled: true });
  });

  it('rejects invalid bodies with details', async () => {
    const res = await t.app.inject({ method: 'POST', url: url(a), headers: adminAuth(), payload: { name: '', enabled: 'yes', extra: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Validation error');
    expect(res.json().details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['name', 'enabled']));
    const patch = await t.app.inject({ method: 'PATCH', url: url(a, '/skill_x'), headers: adminAuth(), payload: { instructions: 'x'.repeat(20_001) } });
    expect(patch.statusCode).toBe(400);
  });

  it('lists, filters, reads, patches and deletes; only enabled skills reach the widget', async () => {
    const p = await createProject(t, {}, 'Widget skills');
    const refund = await create(p, { name: 'Refund', description: 'Get your money back', instructions: 'Check the order first.' });
    const hidden = await create(p, { name: 'Internal', description: 'Staff only', enabled: false });

    const list = await t.app.inject({ method: 'GET', url: url(p), headers: auth(p.secretKey) });
    expect(list.statusCode).toBe(200);
    // In creation order; two skills made in the same millisecond tie on it (then either order is right).
    const expectCreationOrder = (listed: string[]) =>
      refund.createdAt === hidden.createdAt ? expect([...listed].sort()).toEqual([refund.id, hidden.id].sort()) : expect(listed).toEqual([refund.id, hidden.id]);
    expectCreationOrder(list.json().skills.map((s: Skill) => s.id));
    const enabledOnly = await t.app.inject({ method: 'GET', url: url(p, '?enabled=true'), headers: adminAuth() });
    expect(enabledOnly.json().skills.map((s: Skill) => s.id)).toEqual([refund.id]);

    const widget = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expect(widget.json().availableSkills).toEqual([{ id: refund.id, name: 'Refund', description: 'Get your money back' }]);

    const patched = await t.app.inject({ method: 'PATCH', url: url(p, `/${hidden.id}`), headers: adminAuth(), payload: { enabled: true, description: 'Now public' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().skill).toMatchObject({ id: hidden.id, name: 'Internal', description: 'Now public', enabled: true });
    expect(patched.json().skill.updatedAt >= hidden.updatedAt).toBe(true);
    const read = await t.app.inject({ method: 'GET', url: url(p, `/${hidden.id}`), headers: adminAuth() });
    expect(read.json().skill).toEqual(patched.json().skill);

    const widget2 = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expectCreationOrder(widget2.json().availableSkills.map((s: { id: string }) => s.id));

    const disable = await t.app.inject({ method: 'PATCH', url: url(p, `/${refund.id}`), headers: adminAuth(), payload: { enabled: false } });
    expect(disable.json().skill.enabled).toBe(false);
    const del = await t.app.inject({ method: 'DELETE', url: url(p, `/${hidden.id}`), headers: adminAuth() });
    expect(del.statusCode).toBe(204);
    expect(await t.deps.store.db.selectFrom('skills').select('id').where('id', '=', hidden.id).executeTakeFirst()).toBeUndefined();
    const widget3 = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expect(widget3.json().availableSkills).toEqual([]);
  });

  it('answers 404 Skill not found for unknown skills and Project not found for unknown projects', async () => {
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await t.app.inject({ method, url: url(a, '/skill_nope'), headers: adminAuth(), payload });
      expect([method, res.statusCode, res.json()]).toEqual([method, 404, { error: 'Skill not found' }]);
    }
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects/proj_nope/skills', headers: adminAuth() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Project not found' });
  });

  it("never lets a project's secret key reach another project's skills", async () => {
    const bSkill = await create(b, { name: 'B only', instructions: 'secret sauce' });
    const cases: Array<[string, string, object?]> = [
      ['GET', url(b)],
      ['POST', url(b), { name: 'planted' }],
      ['GET', url(b, `/${bSkill.id}`)],
      ['PATCH', url(b, `/${bSkill.id}`), { name: 'renamed' }],
      ['DELETE', url(b, `/${bSkill.id}`)],
    ];
    for (const [method, u, payload] of cases) {
      const res = await t.app.inject({ method: method as 'GET', url: u, headers: auth(a.secretKey), payload });
      expect([method, u, res.statusCode]).toEqual([method, u, 404]);
      expect(res.json()).toEqual({ error: 'Project not found' });
    }
    // Through A's own path, B's skill id is unknown.
    const viaA = await t.app.inject({ method: 'PATCH', url: url(a, `/${bSkill.id}`), headers: auth(a.secretKey), payload: { name: 'renamed' } });
    expect(viaA.statusCode).toBe(404);
    expect(viaA.json()).toEqual({ error: 'Skill not found' });
    const rows = await t.deps.store.db.selectFrom('skills').selectAll().where('project_id', '=', b.project.id).execute();
    expect(rows.map((r) => r.name)).toEqual(['B only']);
    const pub = await t.app.inject({ method: 'GET', url: url(a), headers: auth(a.publicKey) });
    expect(pub.statusCode).toBe(401);
  });
});
