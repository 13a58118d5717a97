import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { adminAuth, auth, createProject, createTestApp, dialects, sendMessage, type TestApp } from '../../../test/helper.js';
import { addSource, waitForSource } from '../../../test/support/knowledge.js';
import { parseAnswer, streamedText } from '../../../test/ui-stream.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../knowledge/jobs.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { gapList, gapResolved, gapWrapped } from './schema.js';

type GapList = z.infer<typeof gapList>;

const RETURNS = `# Returns

## Return window

You can return any unworn item within 30 days of delivery for a full refund. Use the prepaid label that came in the box.
`;

describe.each(dialects)('knowledge gaps ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let p: CreatedProject;
  const url = (path = '') => `/api/v1/admin/projects/${p.project.id}/gaps${path}`;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });
  beforeEach(async () => {
    p = await createProject(t, { model: 'builtin' });
    await addSource(t.app, p.project.id, { type: 'markdown', content: RETURNS });
  });

  /** Asks in a new conversation through the runtime API; returns the stored answer and the stream. */
  async function ask(question: string) {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    const res = await sendMessage(t.app, p.publicKey, conversationId, question);
    expect(res.statusCode).toBe(200);
    const answer = await parseAnswer(res.body);
    const messages = await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
    return { conversationId, user: messages[0]!, assistant: messages[1]!, text: streamedText(answer.chunks), chunks: answer.chunks };
  }

  /** Rates an answer down, as the widget's thumbs-down does. */
  async function rateDown(answer: Awaited<ReturnType<typeof ask>>) {
    const fb = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/feedback',
      headers: auth(p.publicKey),
      payload: { conversationId: answer.conversationId, messageId: answer.assistant.id, rating: 'NEGATIVE' },
    });
    expect(fb.statusCode).toBe(201);
  }

  const gaps = async (query = '') => {
    const res = await t.app.inject({ method: 'GET', url: url(query), headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    return (res.json() as GapList).gaps;
  };

  it('groups declined and down-rated questions by meaning, most frequent first, with stable ids', async () => {
    const first = await ask('Do you offer gift wrapping?');
    expect(first.assistant.outcome).toBe('declined');
    await ask('Can I get my order gift wrapped?');
    const third = await ask('Is gift wrapping available?');
    await ask('Do you have a shop in Berlin?');
    const rated = await ask('How long do I have to return an item?');
    expect(rated.assistant.outcome).toBe('answered');
    await rateDown(rated);
    // An answered question without a bad rating is no gap.
    await ask('How long do I have to return an item?');

    const list = await gaps();
    expect(list).toHaveLength(3);
    const [wrapping, ...rest] = list;
    expect(wrapping).toMatchObject({
      question: 'Do you offer gift wrapping?',
      count: 3,
      lastAskedAt: third.user.created_at,
      reasons: { declined: 3, negativeFeedback: 0 },
    });
    expect(wrapping!.id).toMatch(/^gap_/);
    expect(wrapping!.examples[0]).toEqual({ conversationId: third.conversationId, messageId: third.user.id, text: 'Is gift wrapping available?' });
    expect(wrapping!.examples.map((e) => e.text)).toEqual(['Is gift wrapping available?', 'Can I get my order gift wrapped?', 'Do you offer gift wrapping?']);
    expect(rest.map((g) => [g.question, g.count, g.reasons])).toEqual([
      ['How long do I have to return an item?', 1, { declined: 0, negativeFeedback: 1 }],
      ['Do you have a shop in Berlin?', 1, { declined: 1, negativeFeedback: 0 }],
    ]);

    // Stable: the same ids on the next read, also when the group grows.
    await ask('Could you gift wrap my order?');
    const again = await gaps();
    expect(again.map((g) => g.id)).toEqual(list.map((g) => g.id));
    expect(again[0]!.count).toBe(4);
    expect(await t.deps.store.db.selectFrom('knowledge_gaps').select('id').where('project_id', '=', p.project.id).execute()).toHaveLength(3);
    // The window counts back from now: a day holds them all.
    expect(await gaps('?days=1')).toHaveLength(3);
  });

  it("reads a question's misspellings as the content's words when grouping, in gaps and in analytics' top questions", async () => {
    // Asked misspelt first: the gap (and the FAQ item resolving it) still takes the right spelling.
    const typed = await ask('how long do i have to retrun an itme');
    const rightly = await ask('How long do I have to return an item?');
    for (const answer of [typed, rightly]) {
      expect(answer.assistant.outcome).toBe('answered');
      await rateDown(answer);
    }
    const list = await gaps();
    expect(list.map((g) => [g.question, g.count])).toEqual([['How long do I have to return an item?', 2]]);
    expect(list[0]!.examples.map((e) => e.text)).toEqual(['How long do I have to return an item?', 'how long do i have to retrun an itme']);

    const analytics = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics`, headers: adminAuth() });
    expect(analytics.json().topQuestions).toMatchObject([{ question: 'How long do I have to return an item?', count: 2 }]);
  });

  it('keeps matching a gap stored from a misspelt question by its terms as written', async () => {
    // Stored and dismissed before misspellings were respelled: its terms are the question's own.
    const at = new Date().toISOString();
    await t.deps.store.db
      .insertInto('knowledge_gaps')
      .values({ id: 'gap_typed', project_id: p.project.id, question: 'how long do i have to retrun an itme', terms: JSON.stringify(['itme', 'long', 'retrun']), signature: 'itme long retrun', status: 'dismissed', answer: null, faq_source_id: null, closed_at: at, created_at: at, updated_at: at })
      .execute();
    await rateDown(await ask('how long do i have to retrun an itme'));
    expect(await gaps()).toEqual([]);
    const rows = await t.deps.store.db.selectFrom('knowledge_gaps').select('id').where('project_id', '=', p.project.id).execute();
    expect(rows).toEqual([{ id: 'gap_typed' }]);
  });

  it('resolves a gap into the FAQ, after which the agent answers it and its paraphrases and cites that item', async () => {
    await ask('Do you offer gift wrapping?');
    await ask('Do you have a shop in Berlin?');
    // Asked as often: the newest first.
    const [berlin, wrapping] = await gaps();
    expect([berlin!.question, wrapping!.question]).toEqual(['Do you have a shop in Berlin?', 'Do you offer gift wrapping?']);
    const res = await t.app.inject({
      method: 'POST',
      url: url(`/${wrapping!.id}/resolve`),
      headers: adminAuth(),
      payload: { answer: 'Yes: gift wrapping costs €3.50 per order. Choose it at checkout, and add a message card for free.' },
    });
    expect(res.statusCode).toBe(200);
    const resolved = res.json() as z.infer<typeof gapResolved>;
    expect(resolved.gap).toMatchObject({ id: wrapping!.id, status: 'resolved', faqSourceId: resolved.source.id });
    expect(resolved.source).toMatchObject({ type: 'faq', title: 'Answers from the support team' });
    expect((await waitForSource(t.app, p.project.id, resolved.source.id)).status).toBe('ready');
    expect((await gaps()).map((g) => g.id)).toEqual([berlin!.id]);

    // The question and a paraphrase are answered from the FAQ item, which is cited.
    for (const question of ['Do you offer gift wrapping?', 'Can my order be gift wrapped?']) {
      const answer = await ask(question);
      expect(answer.assistant.outcome).toBe('answered');
      expect(answer.text).toContain('€3.50');
      const cited = answer.chunks.filter((c) => c.type === 'source-document').map((c) => (c as { sourceId: string }).sourceId);
      expect(cited).toEqual([resolved.source.id]);
      expect(JSON.parse(answer.assistant.sources!)).toEqual([expect.objectContaining({ sourceId: resolved.source.id })]);
    }
    expect((await gaps()).map((g) => g.id)).toEqual([berlin!.id]);

    // Twice: 409. Another gap goes into the same FAQ source.
    const twice = await t.app.inject({ method: 'POST', url: url(`/${wrapping!.id}/resolve`), headers: adminAuth(), payload: { answer: 'x' } });
    expect([twice.statusCode, twice.json()]).toEqual([409, { error: 'Gap already resolved' }]);
    const second = await t.app.inject({ method: 'POST', url: url(`/${berlin!.id}/resolve`), headers: adminAuth(), payload: { answer: 'We only sell online.' } });
    expect((second.json() as z.infer<typeof gapResolved>).source.id).toBe(resolved.source.id);
    const stored = await t.deps.store.db.selectFrom('knowledge_sources').select('payload').where('id', '=', resolved.source.id).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.payload!).map((i: { question: string }) => i.question)).toEqual(['Do you offer gift wrapping?', 'Do you have a shop in Berlin?']);
    await waitForSource(t.app, p.project.id, resolved.source.id);
  });

  it('resolves two gaps at once on a project without an answers source into one source holding both answers', async () => {
    await ask('Do you offer gift wrapping?');
    await ask('Do you have a shop in Berlin?');
    const [berlin, wrapping] = await gaps();
    const resolve = (id: string, answer: string) => t.app.inject({ method: 'POST', url: url(`/${id}/resolve`), headers: adminAuth(), payload: { answer } });
    const both = await Promise.all([resolve(wrapping!.id, 'Yes, for €3.50 per order.'), resolve(berlin!.id, 'We only sell online.')]);
    expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
    const [a, b] = both.map((r) => r.json() as z.infer<typeof gapResolved>);
    expect(a!.source.id).toBe(b!.source.id);

    const sources = await t.deps.store.db
      .selectFrom('knowledge_sources')
      .select(['id', 'payload'])
      .where('project_id', '=', p.project.id)
      .where('type', '=', 'faq')
      .execute();
    expect(sources.map((s) => s.id)).toEqual([a!.source.id]);
    const questions = (JSON.parse(sources[0]!.payload!) as Array<{ question: string }>).map((i) => i.question);
    expect(questions.sort()).toEqual(['Do you have a shop in Berlin?', 'Do you offer gift wrapping?']);
    const stored = await t.deps.store.db.selectFrom('knowledge_gaps').select('faq_source_id').where('project_id', '=', p.project.id).execute();
    expect(stored.map((g) => g.faq_source_id)).toEqual([a!.source.id, a!.source.id]);
    await waitForSource(t.app, p.project.id, a!.source.id);
  });

  it('reopens a resolved gap with only what went unanswered after it was resolved, read after read', async () => {
    await ask('Do you offer gift wrapping?');
    await ask('Do you offer gift wrapping?');
    const [wrapping] = await gaps();
    expect(wrapping!.count).toBe(2);
    const res = await t.app.inject({ method: 'POST', url: url(`/${wrapping!.id}/resolve`), headers: adminAuth(), payload: { answer: 'Yes: gift wrapping costs €3.50 per order.' } });
    await waitForSource(t.app, p.project.id, (res.json() as z.infer<typeof gapResolved>).source.id);
    expect(await gaps()).toEqual([]);

    // Answered from the FAQ now, but rated down: the gap is open again, for that occurrence only.
    const again = await ask('Do you offer gift wrapping?');
    expect(again.assistant.outcome).toBe('answered');
    await rateDown(again);
    const reopened = { id: wrapping!.id, count: 1, reasons: { declined: 0, negativeFeedback: 1 }, examples: [expect.objectContaining({ messageId: again.user.id })] };
    expect(await gaps()).toEqual([expect.objectContaining(reopened)]);
    expect(await gaps()).toEqual([expect.objectContaining(reopened)]);
  });

  it('reopens the gaps whose answers source is deleted, and resolving one again makes a new source', async () => {
    await ask('Do you offer gift wrapping?');
    await ask('Do you offer gift wrapping?');
    await ask('Do you have a shop in Berlin?');
    const [wrapping, berlin] = await gaps();
    const resolve = (id: string, answer: string) => t.app.inject({ method: 'POST', url: url(`/${id}/resolve`), headers: adminAuth(), payload: { answer } });
    const first = (await resolve(wrapping!.id, 'Yes, for €3.50 per order.')).json() as z.infer<typeof gapResolved>;
    await t.app.inject({ method: 'POST', url: url(`/${berlin!.id}/dismiss`), headers: adminAuth() });
    await waitForSource(t.app, p.project.id, first.source.id);
    expect(await gaps()).toEqual([]);

    const removed = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${p.project.id}/knowledge/${first.source.id}`, headers: adminAuth() });
    expect(removed.statusCode).toBe(204);
    // Its answer is gone, so the question is unanswered again, every time it was asked; a dismissed gap stays dismissed.
    expect(await gaps()).toEqual([expect.objectContaining({ id: wrapping!.id, count: 2 })]);
    const row = await t.deps.store.db.selectFrom('knowledge_gaps').selectAll().where('id', '=', wrapping!.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'open', faq_source_id: null, closed_at: null, answer: 'Yes, for €3.50 per order.' });
    const dismissed = await t.deps.store.db.selectFrom('knowledge_gaps').select('status').where('id', '=', berlin!.id).executeTakeFirstOrThrow();
    expect(dismissed.status).toBe('dismissed');

    const again = await resolve(wrapping!.id, 'Yes, for €4 per order.');
    expect(again.statusCode).toBe(200);
    const second = again.json() as z.infer<typeof gapResolved>;
    expect(second.source.id).not.toBe(first.source.id);
    expect(second.gap).toMatchObject({ status: 'resolved', faqSourceId: second.source.id });
    await waitForSource(t.app, p.project.id, second.source.id);
  });

  it('dismisses a gap for good, and validates its input', async () => {
    await ask('Do you have a shop in Berlin?');
    const [berlin] = await gaps();
    const res = await t.app.inject({ method: 'POST', url: url(`/${berlin!.id}/dismiss`), headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    expect((res.json() as z.infer<typeof gapWrapped>).gap).toMatchObject({ id: berlin!.id, status: 'dismissed' });
    await ask('Is there a Berlin shop?');
    expect(await gaps()).toEqual([]);
    expect((await t.app.inject({ method: 'POST', url: url(`/${berlin!.id}/dismiss`), headers: adminAuth() })).statusCode).toBe(200);

    const bad = async (method: 'GET' | 'POST', path: string, payload?: object) => {
      const r = await t.app.inject({ method, url: url(path), headers: adminAuth(), payload });
      return [r.statusCode, r.json()];
    };
    expect(await bad('GET', '?days=0')).toEqual([400, { error: 'Validation error', details: [expect.objectContaining({ path: 'days' })] }]);
    expect(await bad('GET', '?days=many')).toEqual([400, { error: 'Validation error', details: [expect.objectContaining({ path: 'days' })] }]);
    expect(await bad('POST', `/${berlin!.id}/resolve`, { answer: '  ' })).toEqual([400, { error: 'Validation error', details: [expect.objectContaining({ path: 'answer' })] }]);
    expect(await bad('POST', `/${berlin!.id}/resolve`, {})).toEqual([400, { error: 'Validation error', details: [expect.objectContaining({ path: 'answer' })] }]);
    expect(await bad('POST', '/gap_unknown/dismiss')).toEqual([404, { error: 'Gap not found' }]);

    // Another project's gap is not found through this project, and its key does not reach this one.
    const other = await createProject(t);
    const viaOther = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${other.project.id}/gaps/${berlin!.id}/dismiss`,
      headers: { authorization: `Bearer ${other.secretKey}` },
    });
    expect([viaOther.statusCode, viaOther.json()]).toEqual([404, { error: 'Gap not found' }]);
    const foreignKey = await t.app.inject({ method: 'GET', url: url(), headers: { authorization: `Bearer ${other.secretKey}` } });
    expect([foreignKey.statusCode, foreignKey.json()]).toEqual([404, { error: 'Project not found' }]);
  });
});
