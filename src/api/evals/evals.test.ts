import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { addSource } from '../../../test/support/knowledge.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../knowledge/jobs.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { z } from 'zod';
import type { evalResultSchema, evalRunCreated, evalSuiteSchema } from './schema.js';

type EvalResult = z.infer<typeof evalResultSchema>;
type EvalRunResponse = z.infer<typeof evalRunCreated>;
type EvalSuite = z.infer<typeof evalSuiteSchema>;

const RETURNS = `# Returns

## Return window

You can return any unworn item within 30 days of delivery for a full refund. Use the prepaid label that came in the box.
`;

const SHIPPING = `# Shipping

## Delivery times

Standard delivery inside the Netherlands takes two business days. Express delivery arrives the next morning before noon.
`;

describe.each(dialects)('answer regression tests ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let fake: FakeOpenAICompatible;
  let p: CreatedProject;
  let shippingId: string;
  const url = (path = '') => `/api/v1/admin/projects/${p.project.id}/evals${path}`;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({ dialect, env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl } });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await fake.close();
  });
  beforeEach(async () => {
    p = await createProject(t, { model: 'builtin' });
    await addSource(t.app, p.project.id, { type: 'markdown', content: RETURNS });
    shippingId = (await addSource(t.app, p.project.id, { type: 'markdown', content: SHIPPING })).id;
  });

  const cases = () => [
    { question: 'How long do I have to return an item?', expectedSources: ['Returns'], mustContain: ['30 days'] },
    { question: 'How long does standard delivery take?', expectedSources: [shippingId], mustContain: ['two business days'] },
    { question: 'Do you sell gift wrapping?', answerable: false },
  ];

  async function storedRows() {
    const db = t.deps.store.db;
    const conversations = await db.selectFrom('conversations').select('id').where('project_id', '=', p.project.id).execute();
    const messages = await db.selectFrom('messages').select('id').where('project_id', '=', p.project.id).execute();
    return conversations.length + messages.length;
  }

  it('runs cases through retrieval and the agent, stores no conversation, and reports the metrics', async () => {
    const res = await t.app.inject({ method: 'POST', url: url('/run'), headers: adminAuth(), payload: { cases: cases() } });
    expect(res.statusCode).toBe(200);
    const body = res.json() as EvalResult;
    expect(body.model).toBe('builtin');
    const [returns, shipping, wrapping] = body.results;
    expect(returns).toMatchObject({ answerable: true, rank: 1, outcome: 'answered', citesExpected: true, missingTerms: [], declined: false, passed: true });
    expect(returns!.answer).toContain('30 days');
    expect(returns!.cited.map((c) => c.title)).toContain('Returns');
    expect(shipping).toMatchObject({ rank: 1, citesExpected: true, missingTerms: [], passed: true });
    expect(shipping!.cited[0]!.sourceId).toBe(shippingId);
    expect(wrapping).toMatchObject({ answerable: false, rank: null, outcome: 'declined', cited: [], citesExpected: null, declined: true, passed: true });
    expect(body.metrics).toEqual({
      cases: 3,
      answerable: 2,
      unanswerable: 1,
      hitAt3: 1,
      mrrAt10: 1,
      citesExpectedSource: 1,
      keyTermsPresent: 1,
      unanswerableDeclined: 1,
      answeredAnyway: 0,
      wronglyDeclined: 0,
      passed: 3,
    });
    expect(await storedRows()).toBe(0);
  });

  it('counts a failed answer neither as declined nor as answered anyway', async () => {
    // The model is down: every answer fails.
    fake.setFallback(() => ({ httpError: { status: 400, body: { error: { message: 'model not found' } } } }));
    p = await createProject(t, { model: 'openai-compatible:fake' });
    const res = await t.app.inject({
      method: 'POST',
      url: url('/run'),
      headers: adminAuth(),
      payload: { cases: [{ question: 'Do you sell gift wrapping?', answerable: false }, { question: 'How long do I have to return an item?' }] },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as EvalResult;
    expect(body.results.map((r) => [r.outcome, r.declined, r.passed])).toEqual([
      ['error', false, false],
      ['error', false, false],
    ]);
    expect(body.metrics).toMatchObject({ unanswerableDeclined: 0, answeredAnyway: 0, wronglyDeclined: 0, passed: 0 });
  });

  it('keeps suites and their runs, and compares each run with the one before', async () => {
    const created = await t.app.inject({ method: 'POST', url: url(), headers: adminAuth(), payload: { name: 'Basics', cases: cases() } });
    expect(created.statusCode).toBe(201);
    const suite = (created.json() as { eval: EvalSuite }).eval;
    expect(suite).toMatchObject({ name: 'Basics', runs: [] });
    expect(suite.id).toMatch(/^eval_/);
    expect(suite.cases[2]).toEqual({ question: 'Do you sell gift wrapping?', answerable: false });

    const first = await t.app.inject({ method: 'POST', url: url(`/${suite.id}/run`), headers: adminAuth() });
    expect(first.statusCode).toBe(201);
    const firstRun = first.json() as EvalRunResponse;
    expect(firstRun.comparison).toBeNull();
    expect(firstRun.run).toMatchObject({ evalId: suite.id, model: 'builtin', metrics: { passed: 3, answeredAnyway: 0 } });

    // The knowledge changes: gift wrapping is now covered, so the "unanswerable" case is answered.
    await addSource(t.app, p.project.id, {
      type: 'faq',
      items: [{ question: 'Do you sell gift wrapping?', answer: 'Yes, gift wrapping costs €3.50 per order; choose it at checkout.' }],
    });
    const second = await t.app.inject({ method: 'POST', url: url(`/${suite.id}/run`), headers: adminAuth() });
    const secondRun = second.json() as EvalRunResponse;
    expect(secondRun.comparison).toMatchObject({
      previousRunId: firstRun.run.id,
      delta: { hitAt3: 0, unanswerableDeclined: -1, answeredAnyway: 1, wronglyDeclined: 0, passed: -1 },
      nowFailing: ['Do you sell gift wrapping?'],
      nowPassing: [],
    });

    const read = await t.app.inject({ method: 'GET', url: url(`/${suite.id}`), headers: adminAuth() });
    expect((read.json() as { eval: EvalSuite }).eval.runs.map((r) => r.id)).toEqual([secondRun.run.id, firstRun.run.id]);
    // Each kept run can be read again with its per-case results and its comparison, as it was answered.
    const readRun = async (runId: string, evalId = suite.id) => t.app.inject({ method: 'GET', url: url(`/${evalId}/runs/${runId}`), headers: adminAuth() });
    expect((await readRun(secondRun.run.id)).json()).toEqual(secondRun);
    expect((await readRun(firstRun.run.id)).json()).toEqual(firstRun);
    const unknownRun = await readRun('evrun_unknown');
    expect([unknownRun.statusCode, unknownRun.json()]).toEqual([404, { error: 'Eval run not found' }]);
    const otherSuite = (await t.app.inject({ method: 'POST', url: url(), headers: adminAuth(), payload: { name: 'Other', cases: cases() } })).json() as { eval: EvalSuite };
    expect((await readRun(firstRun.run.id, otherSuite.eval.id)).json()).toEqual({ error: 'Eval run not found' });
    await t.app.inject({ method: 'DELETE', url: url(`/${otherSuite.eval.id}`), headers: adminAuth() });

    const list = await t.app.inject({ method: 'GET', url: url(), headers: adminAuth() });
    expect(list.json()).toEqual({
      evals: [{ id: suite.id, name: 'Basics', caseCount: 3, createdAt: suite.createdAt, updatedAt: suite.updatedAt, lastRun: { id: secondRun.run.id, model: 'builtin', metrics: secondRun.run.metrics, createdAt: secondRun.run.createdAt } }],
    });
    const stored = await t.deps.store.db.selectFrom('eval_runs').select(['id', 'eval_id']).where('eval_id', '=', suite.id).execute();
    expect(stored).toHaveLength(2);
    expect(await storedRows()).toBe(0);

    expect((await t.app.inject({ method: 'DELETE', url: url(`/${suite.id}`), headers: adminAuth() })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: url(`/${suite.id}`), headers: adminAuth() })).json()).toEqual({ error: 'Eval not found' });
    expect(await t.deps.store.db.selectFrom('eval_runs').select('id').where('eval_id', '=', suite.id).execute()).toEqual([]);
  });

  it('names a source by a title with a colon in it, and compares a question asked twice case by case', async () => {
    await addSource(t.app, p.project.id, { type: 'markdown', title: 'Gifts: wrapping and messages', content: '# Gift wrapping\n\nWe offer gift wrapping for 3.50 EUR per order.\n' });
    const titled = await t.app.inject({
      method: 'POST',
      url: url('/run'),
      headers: adminAuth(),
      payload: { cases: [{ question: 'Do you offer gift wrapping?', expectedSources: ['gifts: wrapping and messages'] }] },
    });
    expect(titled.json().results[0]).toMatchObject({ rank: 1, citesExpected: true, passed: true });

    const twice = [
      { question: 'How long does standard delivery take?', mustContain: ['two business days'] },
      { question: 'How long does standard delivery take?', mustContain: ['teleport'] },
    ];
    const created = await t.app.inject({ method: 'POST', url: url(), headers: adminAuth(), payload: { name: 'Twice', cases: twice } });
    const suite = (created.json() as { eval: EvalSuite }).eval;
    const first = (await t.app.inject({ method: 'POST', url: url(`/${suite.id}/run`), headers: adminAuth() })).json() as EvalRunResponse;
    expect(first.run.results.map((r) => r.passed)).toEqual([true, false]);
    const second = (await t.app.inject({ method: 'POST', url: url(`/${suite.id}/run`), headers: adminAuth() })).json() as EvalRunResponse;
    expect(second.comparison).toMatchObject({ delta: { passed: 0 }, nowFailing: [], nowPassing: [] });
  });

  it('refuses bad input with 400 and clear messages, and other projects with 404', async () => {
    const post = (payload: unknown, path = '/run', headers = adminAuth()) => t.app.inject({ method: 'POST', url: url(path), headers, payload: payload as object });
    const details = async (payload: unknown, path?: string) => {
      const res = await post(payload, path);
      expect(res.statusCode).toBe(400);
      return (res.json() as { details: Array<{ path: string; message: string }> }).details;
    };
    expect(await details({ cases: [] })).toEqual([expect.objectContaining({ path: 'cases' })]);
    expect(await details({ cases: Array.from({ length: 101 }, (_, i) => ({ question: `q${i}` })) })).toEqual([expect.objectContaining({ path: 'cases' })]);
    expect(await details({ cases: [{ question: '   ' }] })).toEqual([expect.objectContaining({ path: 'cases.0.question' })]);
    expect(await details({ cases: [{ question: 'x'.repeat(1001) }] })).toEqual([expect.objectContaining({ path: 'cases.0.question' })]);
    expect(await details({ cases: [{ question: 'Mars?', answerable: false, mustContain: ['no'] }] })).toEqual([
      { path: 'cases.0.mustContain', message: 'an unanswerable case (answerable: false) has no expected sources or key terms' },
    ]);
    expect(await details({ cases: [{ question: 'q', expectedSources: 'Returns' }] })).toEqual([expect.objectContaining({ path: 'cases.0.expectedSources' })]);
    expect(await details({ cases: [{ question: 'q', extra: 1 }] })).toEqual([expect.objectContaining({ path: 'cases.0' })]);
    expect(await details({ name: '', cases: [{ question: 'q' }] }, '')).toEqual([expect.objectContaining({ path: 'name' })]);

    const other = await createProject(t);
    expect((await post({ cases: [{ question: 'q' }] }, '/run', { authorization: `Bearer ${other.secretKey}` })).json()).toEqual({ error: 'Project not found' });
    expect((await post({ cases: [{ question: 'q' }] }, '/run', auth(p.publicKey))).statusCode).toBe(401);
    expect((await post({}, '/eval_unknown/run')).json()).toEqual({ error: 'Eval not found' });
  });
});
