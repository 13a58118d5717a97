import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { createUser } from '../accounts/users.js';
import { claimGap, gapAnswered } from '../conversations/gaps.js';
import { EVAL_LIMITS } from '../evals/cases.js';
import { createSuite } from '../evals/suites.js';
import { newId, now } from '../lib/ids.js';
import { MAX_ENDPOINTS_PER_PROJECT } from '../webhooks/endpoints.js';
import { createWebhook } from './webhooks/service.js';

/**
 * The same admin request sent several times at once, as two teammates or a retrying script do. Each
 * check was made and then written, with other requests in between: on PostgreSQL, whose
 * connections run side by side, a cap was passed, the last owner removed, a project's patch lost,
 * two answers taken for one gap, and two replies given one position in a conversation (a 500). Each
 * request now takes its turn at the row it depends on; SQLite, whose one connection runs one
 * transaction at a time, must give the same answers.
 */
describe.each(dialects)('requests at once on $name', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect, env: { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.app.inject({ method, url: `/api/v1/admin${url}`, headers: adminAuth(), ...(payload ? { payload } : {}) });
  const statuses = (responses: Array<{ statusCode: number }>) => responses.map((r) => r.statusCode).sort();

  it("stores a conversation's replies sent at once, each in a position of its own", async () => {
    const p = await createProject(t, { model: 'builtin' });
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const id = created.json().conversationId as string;
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => admin('POST', `/projects/${p.project.id}/conversations/${id}/messages`, { content: `Reply ${i}`, author: { name: 'Sam' } })),
    );
    expect(statuses(replies)).toEqual(Array(8).fill(201));
    const rows = await t.deps.store.db.selectFrom('messages').select(['seq', 'content']).where('conversation_id', '=', id).orderBy('seq').execute();
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(rows.map((r) => r.content)).size).toBe(8);
    const conversation = await t.deps.store.db.selectFrom('conversations').select('message_count').where('id', '=', id).executeTakeFirstOrThrow();
    expect(Number(conversation.message_count)).toBe(8);
  });

  it('resolves a gap once when its answer is sent several times at once, and stores the answer that won', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const at = now();
    const gapId = newId('gap');
    await t.deps.store.db
      .insertInto('knowledge_gaps')
      .values({ id: gapId, project_id: p.project.id, question: 'Do you offer gift wrapping?', terms: JSON.stringify(['gift', 'offer', 'wrap']), signature: 'gift offer wrap', status: 'open', answer: null, faq_source_id: null, closed_at: null, created_at: at, updated_at: at })
      .execute();
    const answers = ['Yes, for €3.50.', 'Yes, for €4.', 'No.'];
    const res = await Promise.all(answers.map((answer) => admin('POST', `/projects/${p.project.id}/gaps/${gapId}/resolve`, { answer })));
    expect(statuses(res)).toEqual([200, 409, 409]);
    const won = res.find((r) => r.statusCode === 200)!.json();
    expect(res.filter((r) => r.statusCode === 409).map((r) => r.json())).toEqual([{ error: 'Gap already resolved' }, { error: 'Gap already resolved' }]);
    const gap = await t.deps.store.db.selectFrom('knowledge_gaps').selectAll().where('id', '=', gapId).executeTakeFirstOrThrow();
    expect(gap).toMatchObject({ status: 'resolved', answer: won.gap.answer, faq_source_id: won.source.id });
    const faq = await t.deps.store.db.selectFrom('knowledge_sources').select('payload').where('id', '=', won.source.id).executeTakeFirstOrThrow();
    expect(JSON.parse(faq.payload!)).toEqual([{ question: 'Do you offer gift wrapping?', answer: won.gap.answer }]);

    // A resolve that died between its claim and its answer (no FAQ source recorded) holds the gap
    // for two minutes, then another may take it.
    const dead = async (minutesAgo: number) => {
      const id = newId('gap');
      const then = new Date(Date.now() - minutesAgo * 60_000).toISOString();
      await t.deps.store.db
        .insertInto('knowledge_gaps')
        .values({ id, project_id: p.project.id, question: `Do you sell gift cards ${minutesAgo}?`, terms: JSON.stringify(['card', 'gift', 'sell']), signature: `card gift sell ${minutesAgo}`, status: 'resolved', answer: 'Lost.', faq_source_id: null, closed_at: then, created_at: then, updated_at: then })
        .execute();
      return (await admin('POST', `/projects/${p.project.id}/gaps/${id}/resolve`, { answer: 'Yes.' })).statusCode;
    };
    expect(await dead(0)).toBe(409);
    expect(await dead(3)).toBe(200);

    // A slow resolve taken over after those two minutes does not overwrite the one that took it.
    const slowId = newId('gap');
    await t.deps.store.db
      .insertInto('knowledge_gaps')
      .values({ id: slowId, project_id: p.project.id, question: 'Do you gift wrap?', terms: JSON.stringify(['gift', 'wrap']), signature: 'gift wrap', status: 'open', answer: null, faq_source_id: null, closed_at: null, created_at: at, updated_at: at })
      .execute();
    const slow = await claimGap(t.deps.store.db, p.project.id, slowId, 'Slow answer.');
    const then = new Date(Date.now() - 3 * 60_000).toISOString();
    await t.deps.store.db.updateTable('knowledge_gaps').set({ updated_at: then }).where('id', '=', slowId).execute();
    const overtaking = await admin('POST', `/projects/${p.project.id}/gaps/${slowId}/resolve`, { answer: 'Quick answer.' });
    expect(overtaking.statusCode).toBe(200);
    await expect(gapAnswered(t.deps.store.db, { ...slow, at: then }, won.source.id)).rejects.toMatchObject({ statusCode: 409 });
    expect(await t.deps.store.db.selectFrom('knowledge_gaps').select(['answer', 'faq_source_id']).where('id', '=', slowId).executeTakeFirstOrThrow()).toEqual({ answer: 'Quick answer.', faq_source_id: overtaking.json().source.id });
  });

  it('stops at the cap of webhooks and of eval suites when the last ones are created at once', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const base = `/projects/${p.project.id}`;
    for (let i = 0; i < MAX_ENDPOINTS_PER_PROJECT - 3; i++) expect((await admin('POST', `${base}/webhooks`, { url: `https://127.0.0.1/hook/${i}` })).statusCode).toBe(201);
    const hooks = await Promise.all(Array.from({ length: 10 }, (_, i) => admin('POST', `${base}/webhooks`, { url: `https://127.0.0.1/late/${i}` })));
    expect(statuses(hooks)).toEqual([201, 201, 201, ...Array(7).fill(409)]);
    const storedHooks = await t.deps.store.db.selectFrom('webhook_endpoints').select('id').where('project_id', '=', p.project.id).execute();
    expect(storedHooks).toHaveLength(MAX_ENDPOINTS_PER_PROJECT);

    const suite = (name: string) => ({ name, cases: [{ question: 'How long do I have to return an item?' }] });
    for (let i = 0; i < EVAL_LIMITS.suites - 3; i++) expect((await admin('POST', `${base}/evals`, suite(`Suite ${i}`))).statusCode).toBe(201);
    const suites = await Promise.all(Array.from({ length: 10 }, (_, i) => admin('POST', `${base}/evals`, suite(`Late ${i}`))));
    expect(statuses(suites)).toEqual([201, 201, 201, ...Array(7).fill(409)]);
    const storedSuites = await t.deps.store.db.selectFrom('eval_suites').select('id').where('project_id', '=', p.project.id).execute();
    expect(storedSuites).toHaveLength(EVAL_LIMITS.suites);
  });

  it('keeps the last owner when two owners demote or remove each other at once', async () => {
    const owners = await t.deps.store.db.selectFrom('users').select('id').where('role', '=', 'owner').execute();
    for (const o of owners) await admin('DELETE', `/users/${o.id}`);
    const user = (n: string) => createUser(t.deps.store.db, { email: `${n.toLowerCase()}-${newId('user')}@example.com`, name: n, role: 'owner', password: 'correct horse battery' });
    const countOwners = async () => (await t.deps.store.db.selectFrom('users').select('id').where('role', '=', 'owner').execute()).length;

    const [a, b] = await Promise.all([user('Ann'), user('Bo')]);
    const demoted = await Promise.all([a, b].map((u) => admin('PATCH', `/users/${u.id}`, { role: 'member' })));
    expect(statuses(demoted)).toEqual([200, 409]);
    expect(await countOwners()).toBe(1);

    const c = await user('Cy');
    const stillOwner = demoted[0]!.statusCode === 409 ? a : b;
    const removed = await Promise.all([stillOwner, c].map((u) => admin('DELETE', `/users/${u.id}`)));
    expect(statuses(removed)).toEqual([204, 409]);
    expect(await countOwners()).toBe(1);
  });

  it("merges a project's patches sent at once, losing none", async () => {
    const p = await createProject(t, { model: 'builtin' });
    const patches = [{ settings: { widget: { primaryColor: '#111111' } } }, { settings: { widget: { position: 'bottom-left' } } }, { settings: { instructions: 'Be brief.' } }, { name: 'Renamed' }];
    const res = await Promise.all(patches.map((patch) => admin('PATCH', `/projects/${p.project.id}`, patch)));
    expect(statuses(res)).toEqual([200, 200, 200, 200]);
    const row = await t.deps.store.db.selectFrom('projects').select(['name', 'settings']).where('id', '=', p.project.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Renamed');
    expect(JSON.parse(row.settings)).toMatchObject({ instructions: 'Be brief.', widget: { primaryColor: '#111111', position: 'bottom-left' } });
  });

  it('answers 404, not 500, to a webhook or an eval suite added to a project deleted meanwhile', async () => {
    for (let round = 0; round < 3; round++) {
      const p = await createProject(t, { model: 'builtin' });
      const base = `/projects/${p.project.id}`;
      const [hook, suite, gone] = await Promise.all([
        admin('POST', `${base}/webhooks`, { url: 'https://127.0.0.1/hook' }),
        admin('POST', `${base}/evals`, { name: 'Race', cases: [{ question: 'Do you ship abroad?' }] }),
        admin('DELETE', base),
      ]);
      expect(gone.statusCode).toBe(204);
      expect([201, 404]).toContain(hook.statusCode);
      expect([201, 404]).toContain(suite.statusCode);
    }
    // The window between the route's check and the insert, held open: the insert finds no project.
    const missing = newId('proj');
    await expect(createWebhook(t.deps, missing, { url: 'https://127.0.0.1/hook' })).rejects.toMatchObject({ statusCode: 404, message: 'Project not found' });
    await expect(createSuite(t.deps.store.db, missing, { name: 'Gone', cases: [{ question: 'Do you ship abroad?' }] })).rejects.toMatchObject({ statusCode: 404, message: 'Project not found' });
  });

  it('answers 404, not 500, to a sync, an eval run or a second delete of what is being deleted meanwhile', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const base = `/projects/${p.project.id}`;
    for (let round = 0; round < 3; round++) {
      // A URL source as a finished crawl leaves it: no crawl is needed for the race.
      const at = now();
      const sourceId = newId('ks');
      await t.deps.store.db
        .insertInto('knowledge_sources')
        .values({ id: sourceId, project_id: p.project.id, type: 'url', title: 'Help', url: 'https://127.0.0.1/help', payload: null, options: JSON.stringify({ maxDepth: 0, maxPages: 1 }), status: 'ready', error: null, pages_done: 1, pages_total: 1, chunks_done: 0, chunk_count: 0, generation: null, synced_at: at, created_at: at, updated_at: at })
        .execute();
      const [sync, del, again] = await Promise.all([
        admin('POST', `${base}/knowledge/${sourceId}/sync`),
        admin('DELETE', `${base}/knowledge/${sourceId}`),
        admin('DELETE', `${base}/knowledge/${sourceId}`),
      ]);
      expect([202, 404]).toContain(sync.statusCode);
      expect(statuses([del, again])).toEqual([204, 404]);
      if (sync.statusCode === 404) expect(sync.json()).toEqual({ error: 'Knowledge source not found' });
      expect(await t.deps.store.db.selectFrom('knowledge_jobs').select('id').where('source_id', '=', sourceId).execute()).toEqual([]);

      const created = await admin('POST', `${base}/evals`, { name: `Race ${round}`, cases: [{ question: 'Do you offer gift wrapping?', answerable: false }] });
      const evalId = created.json().eval.id as string;
      const [run, gone, goneAgain] = await Promise.all([admin('POST', `${base}/evals/${evalId}/run`), admin('DELETE', `${base}/evals/${evalId}`), admin('DELETE', `${base}/evals/${evalId}`)]);
      expect([201, 404]).toContain(run.statusCode);
      expect(statuses([gone, goneAgain])).toEqual([204, 404]);
      expect(await t.deps.store.db.selectFrom('eval_runs').select('id').where('eval_id', '=', evalId).execute()).toEqual([]);
    }
  });
});
