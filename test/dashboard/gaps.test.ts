import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import type { CreatedProject } from '../../src/projects/projects.js';
import { auth, createProject, dialects } from '../helper.js';
import { addSource, waitForSource } from '../support/knowledge.js';
import { parseAnswer, streamedText } from '../ui-stream.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, expectNoSidewaysScroll, seedUser } from './project-pages.js';

const RETURNS = `# Returns

## Return window

You can return any unworn item within 30 days of delivery for a full refund. Use the prepaid label that came in the box.
`;

interface GapReport {
  id: string;
  question: string;
  count: number;
}

/**
 * The Knowledge gaps view in chromium against the real server, a real ingestion worker and the
 * builtin model: questions the content does not cover are declined through the runtime API, show up
 * as gaps, are answered from the page into the FAQ, and are then answered by the agent citing it.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Knowledge gaps ($name)', (dialect) => {
  let stack: DashboardStack;
  let worker: KnowledgeWorker;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startDashboard(dialect);
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await stack?.close();
  });

  async function seedProject(name: string): Promise<CreatedProject> {
    const p = await createProject(stack.t, { model: 'builtin' }, name);
    const source = await addSource(stack.t.app, p.project.id, { type: 'markdown', title: 'Returns', content: RETURNS });
    expect((await waitForSource(stack.t.app, p.project.id, source.id)).status).toBe('ready');
    return p;
  }

  /** Asks in a new conversation through the runtime API, as the widget does. */
  async function ask(p: CreatedProject, question: string) {
    const created = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    const res = await stack.t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: question }] },
    });
    expect(res.statusCode).toBe(200);
    const answer = await parseAnswer(res.body);
    const assistant = await stack.t.deps.store.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .where('role', '=', 'assistant')
      .executeTakeFirstOrThrow();
    const cited = answer.chunks.filter((c) => c.type === 'source-document').map((c) => (c as { sourceId: string }).sourceId);
    return { conversationId, outcome: assistant.outcome, text: streamedText(answer.chunks), cited };
  }

  const gaps = async (projectId: string, days = 30) => (await adminApi<{ gaps: GapReport[] }>(stack.t, 'GET', `/projects/${projectId}/gaps?days=${days}`)).body.gaps;

  it('lists gaps by period, links their examples, answers one into the FAQ the agent then cites, and dismisses another', async () => {
    const p = await seedProject('Gaps shop');
    const first = await ask(p, 'Do you offer gift wrapping?');
    expect(first.outcome).toBe('declined');
    await ask(p, 'Can I get my order gift wrapped?');
    await ask(p, 'Is gift wrapping available?');
    const berlin = await ask(p, 'Do you have a shop in Berlin?');
    expect(berlin.outcome).toBe('declined');
    // Asked three weeks ago: in the last 30 days, not in the last 7.
    const old = await ask(p, 'Can I pay with a cheque?');
    const weeksAgo = new Date(Date.now() - 21 * 86_400_000).toISOString();
    await stack.t.deps.store.db.updateTable('messages').set({ created_at: weeksAgo }).where('conversation_id', '=', old.conversationId).execute();
    expect((await gaps(p.project.id)).map((g) => g.question)).toContain('Can I pay with a cheque?');
    expect((await gaps(p.project.id, 7)).map((g) => g.question)).not.toContain('Can I pay with a cheque?');

    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.getByRole('link', { name: 'Knowledge', exact: true }).click();
    await page.getByRole('navigation', { name: 'Knowledge views' }).getByRole('link', { name: 'Gaps' }).click();
    await page.getByRole('heading', { name: 'Knowledge gaps', level: 1 }).waitFor();
    await expect.poll(() => page.url()).toContain(`/dashboard/p/${p.project.id}/knowledge/gaps`);

    // Most frequent first, with count, reasons and the other ways it was asked.
    const list = page.getByRole('list', { name: /Knowledge gaps/ });
    const items = list.locator(':scope > li');
    await items.first().waitFor();
    expect(await items.locator('.gap-question').allTextContents()).toEqual(['Do you offer gift wrapping?', 'Do you have a shop in Berlin?', 'Can I pay with a cheque?']);
    const wrapping = items.filter({ hasText: 'Do you offer gift wrapping?' });
    expect(await wrapping.locator('.meta').textContent()).toMatch(/asked 3 times.*declined 3/);
    await wrapping.getByText(/How it was asked \(3 examples\)/).click();
    const example = wrapping.getByRole('link', { name: '“Do you offer gift wrapping?”' });
    expect(await example.getAttribute('href')).toBe(`/dashboard/p/${p.project.id}/conversations/${first.conversationId}`);

    // An example opens its conversation.
    await example.click();
    await page.locator(`[data-role="user"]`, { hasText: 'Do you offer gift wrapping?' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Knowledge gaps', level: 1 }).waitFor();

    // The period: the cheque question is three weeks old.
    await page.getByLabel('Period').selectOption('7');
    await expect.poll(() => page.url()).toContain('days=7');
    await expect.poll(() => items.locator('.gap-question').allTextContents()).toEqual(['Do you offer gift wrapping?', 'Do you have a shop in Berlin?']);

    // Answer this: an inline form; an empty answer cannot be sent.
    await wrapping.getByRole('button', { name: 'Answer this' }).click();
    const form = page.getByRole('form', { name: 'Answer “Do you offer gift wrapping?”' });
    const answerBox = form.getByLabel('Answer');
    expect(await answerBox.getAttribute('maxlength')).toBe('10000');
    expect(await form.getByRole('button', { name: 'Save answer' }).isDisabled()).toBe(true);
    await expectAccessible(page, 'Knowledge gaps (answer form)');
    await screenshot(page, `gaps-answer-${dialect.name}`);
    await answerBox.fill('Yes: gift wrapping costs €3.50 per order. Choose it at checkout, and add a message card for free.');
    await form.getByRole('button', { name: 'Save answer' }).click();
    await page.getByRole('status').filter({ hasText: 'Answered “Do you offer gift wrapping?”' }).waitFor();
    await wrapping.waitFor({ state: 'detached' });
    expect(await items.locator('.gap-question').allTextContents()).toEqual(['Do you have a shop in Berlin?']);

    // Dismiss asks once more, then the gap is gone for good.
    const shop = items.filter({ hasText: 'Do you have a shop in Berlin?' });
    await shop.getByRole('button', { name: 'Dismiss' }).click();
    await shop.getByRole('button', { name: 'Dismiss for good' }).click();
    await page.getByText(/No knowledge gaps in the last 7 days\. A gap is a question/).waitFor();
    expect((await gaps(p.project.id)).map((g) => g.question)).toEqual(['Can I pay with a cheque?']);
    await expectAccessible(page, 'Knowledge gaps (empty)');

    // The answer went to the FAQ source, listed under Sources; once indexed the agent answers from it and cites it.
    const stored = await stack.t.deps.store.db.selectFrom('knowledge_gaps').select(['question', 'status', 'faq_source_id']).where('project_id', '=', p.project.id).orderBy('question').execute();
    expect(stored.map((g) => [g.question, g.status])).toEqual([
      ['Can I pay with a cheque?', 'open'],
      ['Do you have a shop in Berlin?', 'dismissed'],
      ['Do you offer gift wrapping?', 'resolved'],
    ]);
    const faqId = stored.find((g) => g.status === 'resolved')!.faq_source_id!;
    expect((await waitForSource(stack.t.app, p.project.id, faqId)).status).toBe('ready');
    await page.getByRole('navigation', { name: 'Knowledge views' }).getByRole('link', { name: 'Sources' }).click();
    await page.locator('tr', { hasText: 'Answers from the support team' }).locator('[data-status="ready"]').waitFor();
    const again = await ask(p, 'Do you offer gift wrapping?');
    expect(again.outcome).toBe('answered');
    expect(again.text).toContain('€3.50');
    expect(again.cited).toEqual([faqId]);
    await context.close();
  }, 120_000);

  it('keeps what was typed for each gap while several are being answered, also across periods', async () => {
    const p = await seedProject('Several answers shop');
    await ask(p, 'Do you offer gift wrapping?');
    await ask(p, 'Do you have a shop in Berlin?');
    const old = await ask(p, 'Can I pay with a cheque?');
    const weeksAgo = new Date(Date.now() - 21 * 86_400_000).toISOString();
    await stack.t.deps.store.db.updateTable('messages').set({ created_at: weeksAgo }).where('conversation_id', '=', old.conversationId).execute();
    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/knowledge/gaps`);
    const item = (question: string) => page.locator('li[data-gap-id]', { hasText: question });
    const form = (question: string) => page.getByRole('form', { name: `Answer “${question}”` });
    const WRAPPING = 'Yes: gift wrapping costs €3.50 per order.';
    const BERLIN = 'No shop yet: we sell online only.';
    const CHEQUE = 'We do not take cheques; pay by card or bank transfer.';

    // Answering a second gap keeps the first one's form and text.
    await item('Do you offer gift wrapping?').getByRole('button', { name: 'Answer this' }).click();
    await form('Do you offer gift wrapping?').getByLabel('Answer').fill(WRAPPING);
    await item('Do you have a shop in Berlin?').getByRole('button', { name: 'Answer this' }).click();
    const berlinBox = form('Do you have a shop in Berlin?').getByLabel('Answer');
    await expect.poll(() => berlinBox.evaluate((el) => el === document.activeElement)).toBe(true);
    await berlinBox.fill(BERLIN);
    expect(await form('Do you offer gift wrapping?').count()).toBe(1);
    expect(await form('Do you offer gift wrapping?').getByLabel('Answer').inputValue()).toBe(WRAPPING);

    // A gap outside the period shown keeps its draft until it is shown again.
    await item('Can I pay with a cheque?').getByRole('button', { name: 'Answer this' }).click();
    await form('Can I pay with a cheque?').getByLabel('Answer').fill(CHEQUE);
    const period = page.getByLabel('Period');
    await period.focus();
    await period.selectOption('7');
    await item('Can I pay with a cheque?').waitFor({ state: 'detached' });
    await period.selectOption('30');
    await expect.poll(() => form('Can I pay with a cheque?').getByLabel('Answer').inputValue()).toBe(CHEQUE);
    // Coming back does not take the focus away from the period.
    expect(await period.evaluate((el) => el === document.activeElement)).toBe(true);

    // Each is saved with its own text; saving one leaves the others as they were.
    await form('Do you offer gift wrapping?').getByRole('button', { name: 'Save answer' }).click();
    await page.getByRole('status').filter({ hasText: 'Answered “Do you offer gift wrapping?”' }).waitFor();
    await item('Do you offer gift wrapping?').waitFor({ state: 'detached' });
    expect(await berlinBox.inputValue()).toBe(BERLIN);
    await form('Do you have a shop in Berlin?').getByRole('button', { name: 'Save answer' }).click();
    await item('Do you have a shop in Berlin?').waitFor({ state: 'detached' });
    // Cancel is the one way to drop a draft.
    await form('Can I pay with a cheque?').getByRole('button', { name: 'Cancel' }).click();
    await item('Can I pay with a cheque?').getByRole('button', { name: 'Answer this' }).click();
    expect(await form('Can I pay with a cheque?').getByLabel('Answer').inputValue()).toBe('');

    const stored = await stack.t.deps.store.db
      .selectFrom('knowledge_gaps')
      .select(['question', 'status', 'answer'])
      .where('project_id', '=', p.project.id)
      .orderBy('question')
      .execute();
    expect(stored.map((g) => [g.question, g.status, g.answer])).toEqual([
      ['Can I pay with a cheque?', 'open', null],
      ['Do you have a shop in Berlin?', 'resolved', BERLIN],
      ['Do you offer gift wrapping?', 'resolved', WRAPPING],
    ]);
    await context.close();
  }, 120_000);

  it("shows the server's refusal in the form and keeps the answer typed", async () => {
    const p = await seedProject('Refusing gaps shop');
    await ask(p, 'Do you offer gift wrapping?');
    const [gap] = await gaps(p.project.id);
    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/knowledge/gaps`);
    const item = page.locator('li[data-gap-id]', { hasText: 'Do you offer gift wrapping?' });
    await item.getByRole('button', { name: 'Answer this' }).click();
    // Someone else answers it meanwhile.
    expect((await adminApi(stack.t, 'POST', `/projects/${p.project.id}/gaps/${gap!.id}/resolve`, { answer: 'Yes, for €3.50.' })).status).toBe(200);
    const answerBox = item.getByRole('textbox', { name: 'Answer' });
    await answerBox.fill('Yes, we do.');
    await item.getByRole('button', { name: 'Save answer' }).click();
    await expect.poll(() => item.getByRole('alert').textContent()).toBe('Gap already resolved');
    expect(await answerBox.inputValue()).toBe('Yes, we do.');
    await context.close();
  }, 120_000);

  it('shows a viewer the gaps without the buttons, and the server refuses them too', async () => {
    const p = await seedProject('Viewer gaps shop');
    await ask(p, 'Do you offer gift wrapping?');
    const [gap] = await gaps(p.project.id);
    const viewer = await seedUser(stack.t, { projectId: p.project.id, role: 'viewer' });
    const context = await newContext(browser, 360);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/knowledge/gaps`);
    const item = page.locator('li[data-gap-id]', { hasText: 'Do you offer gift wrapping?' });
    await item.waitFor();
    await page.getByText('read-only access').waitFor();
    expect(await item.getByRole('button').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Answer this|Dismiss/ }).count()).toBe(0);

    const refused = await callFromPage(page, 'POST', `/api/v1/admin/projects/${p.project.id}/gaps/${gap!.id}/resolve`, { answer: 'sneaky' });
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await gaps(p.project.id)).map((g) => g.id)).toEqual([gap!.id]);
    await expectNoSidewaysScroll(page, 'Knowledge gaps');
    await expectAccessible(page, 'Knowledge gaps (viewer, 360 px)');
    await screenshot(page, `gaps-viewer-360-${dialect.name}`);
    await context.close();
  }, 120_000);
});
