import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendMessage } from '../../src/conversations/messages.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import { chatClient } from '../chat-client.js';
import { startActionEndpoint, type ActionEndpoint } from '../fakes/action-endpoint.js';
import { auth, createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, eventually, expectNoSidewaysScroll, seedUser } from './project-pages.js';

interface AdminConversation {
  id: string;
  status: string;
  closedAt: string | null;
}

/**
 * The Conversations page in chromium against the real server. The conversations are real: the
 * builtin model answers through POST /chat/messages from a knowledge source (with its citation) and
 * by calling an action on a local endpoint, and the ratings go through POST /chat/feedback.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Conversations page ($name)', (dialect) => {
  let stack: DashboardStack;
  let worker: KnowledgeWorker;
  let endpoint: ActionEndpoint;
  let browser: Browser;

  beforeAll(async () => {
    endpoint = await startActionEndpoint();
    stack = await startDashboard(dialect, { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await stack?.close();
    await endpoint?.close();
  });

  /** A project with one knowledge source, one action and three real conversations, two of them rated. */
  async function seeded() {
    const created = await createProject(stack.t, { model: 'builtin' }, 'Support shop');
    const { project, publicKey } = created;
    const source = await adminApi<{ source: { id: string } }>(stack.t, 'POST', `/projects/${project.id}/knowledge`, {
      type: 'markdown',
      title: 'Refund policy',
      content: '# Refunds\n\nRefunds are paid back within five working days to the original payment method.',
    });
    await eventually(async () => {
      const s = await adminApi<{ source: { status: string } }>(stack.t, 'GET', `/projects/${project.id}/knowledge/${source.body.source.id}`);
      return s.body.source.status === 'ready' ? true : undefined;
    }, 'knowledge ready');
    const action = await adminApi(stack.t, 'POST', `/projects/${project.id}/actions`, {
      name: 'track_order',
      description: 'Look up where an order is and when it arrives.',
      url: `${endpoint.base}/orders/{orderNumber}`,
      parameters: { type: 'object', properties: { orderNumber: { type: 'string', pattern: '^A-\\d{4}$' } }, required: ['orderNumber'] },
      examples: ['where is my order', 'track my order'],
    });
    expect(action.status).toBe(201);

    const converse = async (text: string, user?: string) => {
      const res = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(publicKey), payload: user ? { endUserExternalId: user } : {} });
      const conversationId = res.json().conversationId as string;
      const { chat } = chatClient({ baseUrl: stack.origin, key: publicKey, conversationId });
      await chat.sendMessage({ text });
      const answer = chat.messages.at(-1)!;
      return { conversationId, answerId: answer.id };
    };
    const rate = async (conversationId: string, messageId: string, rating: 'POSITIVE' | 'NEGATIVE', comment?: string) => {
      const res = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(publicKey), payload: { conversationId, messageId, rating, ...(comment ? { comment } : {}) } });
      expect(res.statusCode).toBe(201);
    };
    const refund = await converse('How long do refunds take?', 'cust-42');
    const order = await converse('Where is my order A-1234?');
    const hello = await converse('Do you have gift cards?', 'cust-7');
    // The stored ids of the answers (the stream's message ids are the stored ones).
    const detail = async (id: string) => (await adminApi<{ messages: Array<{ id: string; role: string }> }>(stack.t, 'GET', `/projects/${project.id}/conversations/${id}`)).body;
    const refundAnswer = (await detail(refund.conversationId)).messages.find((m) => m.role === 'assistant')!;
    const orderAnswer = (await detail(order.conversationId)).messages.find((m) => m.role === 'assistant')!;
    await rate(refund.conversationId, refundAnswer.id, 'NEGATIVE', 'Too slow for me');
    await rate(order.conversationId, orderAnswer.id, 'POSITIVE');
    return { ...created, refund: refund.conversationId, order: order.conversationId, hello: hello.conversationId };
  }

  /** A seeded project and one of its agents signed in: where each test here starts. */
  async function signedInAgent() {
    const s = await seeded();
    const agent = await seedUser(stack.t, { projectId: s.project.id, role: 'agent' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, agent.email, agent.password);
    return { s, context, page };
  }

  /** The conversation list and the ids it shows, in order. */
  function conversationList(page: Page) {
    const list = page.getByRole('list', { name: 'Conversations' });
    const ids = async () => list.locator('li[data-conversation-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-conversation-id')));
    return { list, ids };
  }

  it('filters by status, date, end user and feedback, shows the transcript with sources, tool calls and ratings, and closes', async () => {
    const { s, context, page } = await signedInAgent();
    await page.getByRole('link', { name: 'Conversations' }).click();
    const { list, ids } = conversationList(page);
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);

    const apply = () => page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByLabel('Feedback').selectOption('negative');
    await apply();
    await expect.poll(ids).toEqual([s.refund]);
    expect(page.url()).toContain('feedback=negative');
    await page.getByLabel('Feedback').selectOption('any');
    await apply();
    await expect.poll(ids).toEqual([s.order, s.refund]);
    await page.getByLabel('Feedback').selectOption('none');
    await apply();
    await expect.poll(ids).toEqual([s.hello]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('End user').fill('cust-42');
    await apply();
    await expect.poll(ids).toEqual([s.refund]);
    await page.getByRole('button', { name: 'Clear' }).click();
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Started from').fill(today);
    await page.getByLabel('Started until').fill(today);
    await apply();
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);
    await page.getByLabel('Started from').fill(tomorrow);
    await page.getByLabel('Started until').fill('');
    await apply();
    await page.getByText('No conversations match.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Status').selectOption('CLOSED');
    await apply();
    await page.getByText('No conversations match.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);
    await expectAccessible(page, 'Conversations list');
    await screenshot(page, `conversations-${dialect.name}`);

    // The refund conversation: the answer as the user saw it, its source and the rating with its comment
    await list.locator(`li[data-conversation-id="${s.refund}"] a`).click();
    await page.getByRole('heading', { name: 'Conversation with cust-42', level: 1 }).waitFor();
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await expect.poll(() => transcript.locator('li.msg.assistant .bubble').textContent()).toContain('five working days');
    expect(await transcript.locator('li.msg.user .bubble').textContent()).toBe('How long do refunds take?');
    expect(await transcript.locator('li.msg.assistant .msg-sources').textContent()).toContain('Refund policy');
    expect(await transcript.locator('li.msg.assistant [data-rating="NEGATIVE"]').textContent()).toContain('Too slow for me');
    await page.getByRole('link', { name: '← All conversations' }).click();

    // The order conversation: the action call, its input and output
    await list.locator(`li[data-conversation-id="${s.order}"] a`).click();
    const tool = page.locator('details.tool-call', { hasText: 'track_order' });
    await tool.waitFor();
    await tool.locator('summary').click();
    expect(await tool.textContent()).toMatch(/"orderNumber": "A-1234"[\s\S]*shipped/);
    expect(await page.locator('li.msg.assistant [data-rating="POSITIVE"]').count()).toBe(1);
    await expectAccessible(page, 'Conversation transcript');
    await screenshot(page, `conversation-transcript-${dialect.name}`);

    // An agent may close it, after a confirmation (it cannot be undone): Cancel keeps it open.
    await page.getByRole('button', { name: 'Close conversation' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Close conversation' }).click();
    expect((await adminApi<{ conversation: AdminConversation }>(stack.t, 'GET', `/projects/${s.project.id}/conversations/${s.order}`)).body.conversation.status).toBe('ACTIVE');
    // Confirmed: stored CLOSED, shown closed, the runtime refuses new messages
    await page.getByRole('button', { name: 'Yes, close it for good' }).click();
    await page.locator('.facts').getByText('closed', { exact: true }).waitFor();
    const stored = await adminApi<{ conversation: AdminConversation }>(stack.t, 'GET', `/projects/${s.project.id}/conversations/${s.order}`);
    expect(stored.body.conversation).toMatchObject({ status: 'CLOSED', closedAt: expect.any(String) });
    expect(await page.getByRole('button', { name: 'Close conversation' }).count()).toBe(0);
    await page.getByRole('link', { name: '← All conversations' }).click();
    await page.getByLabel('Status').selectOption('CLOSED');
    await apply();
    await expect.poll(ids).toEqual([s.order]);
    await context.close();
  }, 120_000);

  it('keeps the filter controls and the list in step with the address on Back, Forward and reload', async () => {
    const { s, context, page } = await signedInAgent();
    await page.goto(`${stack.origin}/dashboard/p/${s.project.id}/conversations`);
    const { ids } = conversationList(page);
    const controls = async () => ({
      status: await page.getByLabel('Status').inputValue(),
      user: await page.getByLabel('End user').inputValue(),
      feedback: await page.getByLabel('Feedback').inputValue(),
    });
    const apply = () => page.getByRole('button', { name: 'Apply filters' }).click();
    const none = { status: '', user: '', feedback: '' };
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);

    // Three lists in a row: rated negative, everything (Clear), then one end user.
    await page.getByLabel('Feedback').selectOption('negative');
    await apply();
    await expect.poll(ids).toEqual([s.refund]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);
    await page.getByLabel('End user').fill('cust-7');
    await apply();
    await expect.poll(ids).toEqual([s.hello]);

    // Back and Forward move the list and the controls together.
    await page.goBack();
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);
    await expect.poll(controls).toEqual(none);
    await page.goBack();
    await expect.poll(ids).toEqual([s.refund]);
    await expect.poll(controls).toEqual({ ...none, feedback: 'negative' });
    await page.goForward();
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);
    await expect.poll(controls).toEqual(none);
    await page.goForward();
    await expect.poll(ids).toEqual([s.hello]);
    await expect.poll(controls).toEqual({ ...none, user: 'cust-7' });

    // A view tab keeps the filters, and Back leaves the view.
    await page.getByRole('navigation', { name: 'Inbox' }).getByRole('link', { name: 'Waiting for a person' }).click();
    await page.getByText('Nobody is waiting for a person.').waitFor();
    expect(await controls()).toEqual({ ...none, user: 'cust-7' });
    await page.goBack();
    await expect.poll(ids).toEqual([s.hello]);

    // After Back, Apply applies what the controls show.
    await page.goBack();
    await expect.poll(controls).toEqual(none);
    await apply();
    await expect.poll(() => new URL(page.url()).search).toBe('');
    await expect.poll(ids).toEqual([s.hello, s.order, s.refund]);

    // A bookmarked list opens with its filters in the controls.
    await page.goto(`${stack.origin}/dashboard/p/${s.project.id}/conversations?status=ACTIVE&feedback=positive`);
    await expect.poll(ids).toEqual([s.order]);
    expect(await controls()).toEqual({ status: 'ACTIVE', user: '', feedback: 'positive' });
    await context.close();
  }, 120_000);

  it('lets a viewer read transcripts but not close them (the server refuses too), at 360 px', async () => {
    const s = await seeded();
    const viewer = await seedUser(stack.t, { projectId: s.project.id, role: 'viewer' });
    const context = await newContext(browser, 360);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${s.project.id}/conversations/${s.refund}`);
    await page.getByRole('list', { name: 'Transcript' }).locator('li.msg.assistant').waitFor();
    expect(await page.getByRole('button', { name: 'Close conversation' }).isDisabled()).toBe(true);
    const refused = await callFromPage(page, 'POST', `/api/v1/admin/projects/${s.project.id}/conversations/${s.refund}/close`);
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    const stored = await adminApi<{ conversation: AdminConversation }>(stack.t, 'GET', `/projects/${s.project.id}/conversations/${s.refund}`);
    expect(stored.body.conversation.status).toBe('ACTIVE');
    await expectNoSidewaysScroll(page, 'Conversation transcript');
    await expectAccessible(page, 'Conversation transcript (viewer, 360 px)');
    await screenshot(page, `conversation-viewer-360-${dialect.name}`);
    await page.goto(`${stack.origin}/dashboard/p/${s.project.id}/conversations`);
    await page.getByRole('list', { name: 'Conversations' }).waitFor();
    await expectNoSidewaysScroll(page, 'Conversations');
    await context.close();
  }, 120_000);

  it('leaves out a date in the address that is not a day, says so, and never shows a raw exception', async () => {
    const { project, publicKey } = await createProject(stack.t, {}, 'Link shop');
    const started = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(publicKey), payload: {} });
    const conversationId = started.json().conversationId as string;
    await appendMessage(stack.t.deps.store.db, { id: conversationId, project_id: project.id }, { role: 'user', content: 'Is the shop open on Sundays?', status: 'complete' });
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    // A month 13 and a 30th of February: neither names a day. The valid `to` and the status stay.
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/conversations?from=2024-13-45&to=2999-01-01&status=ACTIVE`);
    const note = page.getByRole('status').filter({ hasText: 'in the address is not a date' });
    await expect.poll(() => note.textContent()).toBe('from=“2024-13-45” in the address is not a date (yyyy-mm-dd): it was left out.');
    await page.locator(`li[data-conversation-id="${conversationId}"]`).waitFor();
    const query = new URL(page.url()).searchParams;
    expect([query.get('from'), query.get('to'), query.get('status')]).toEqual([null, '2999-01-01', 'ACTIVE']);
    expect(await page.getByLabel('Started from').inputValue()).toBe('');
    expect(await page.getByLabel('Started until').inputValue()).toBe('2999-01-01');
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/conversations?from=2024-02-30&to=soon`);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'in the address' }).textContent()).toBe('from=“2024-02-30” and to=“soon” in the address are not dates (yyyy-mm-dd): they were left out.');
    await page.locator(`li[data-conversation-id="${conversationId}"]`).waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/Invalid time value|RangeError/);
    await expectAccessible(page, 'Conversations with a date left out of the address');

    // Other filters make a new address: the note goes.
    await page.getByLabel('Status').selectOption('ACTIVE');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('status').filter({ hasText: 'in the address' }).waitFor({ state: 'detached' });

    // A list that cannot be read for want of a connection says so in words, not the browser's.
    await page.route('**/api/v1/admin/projects/*/conversations?**', (route) => route.abort('internetdisconnected'));
    await page.reload();
    const failed = page.getByRole('alert').filter({ hasText: 'Could not load' });
    await expect.poll(() => failed.textContent(), { timeout: 15_000 }).toBe('Could not load: The server could not be reached: check the connection and try again.');
    await context.close();
  }, 120_000);
});
