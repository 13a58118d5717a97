import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import { chatClient } from '../chat-client.js';
import { auth, createProject, dialects } from '../helper.js';
import { openSse, type SseConnection } from '../sse-client.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, seedUser, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, eventually, expectNoSidewaysScroll } from './project-pages.js';

interface Author {
  type: 'human' | 'agent';
  id?: string | null;
  name?: string;
}
interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  author?: Author;
}
interface Detail {
  conversation: { id: string; status: string; handoff: null | { status: string; assignee?: { id: string | null; name: string } } };
  messages: StoredMessage[];
}

/**
 * The handoff inbox of the Conversations page in chromium against the real server: an end user asks
 * for a person through the runtime API, the request appears live, a teammate takes it, replies (the
 * reply reaches the end user's event stream), hands it back, and the agent answers again.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard handoff inbox ($name)', (dialect) => {
  let stack: DashboardStack;
  let worker: KnowledgeWorker;
  let browser: Browser;
  const streams: SseConnection[] = [];

  beforeAll(async () => {
    stack = await startDashboard(dialect);
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await browser?.close();
    await worker?.stop();
    await stack?.close();
  });

  /** A project whose builtin model answers refund questions from one knowledge source. */
  async function project() {
    const created = await createProject(stack.t, { model: 'builtin' }, 'Parcel shop');
    const source = await adminApi<{ source: { id: string } }>(stack.t, 'POST', `/projects/${created.project.id}/knowledge`, {
      type: 'markdown',
      title: 'Refund policy',
      content: '# Refunds\n\nRefunds are paid back within five working days to the original payment method.',
    });
    await eventually(async () => {
      const s = await adminApi<{ source: { status: string } }>(stack.t, 'GET', `/projects/${created.project.id}/knowledge/${source.body.source.id}`);
      return s.body.source.status === 'ready' ? true : undefined;
    }, 'knowledge ready');
    return created;
  }

  /** An end user's conversation through the runtime API, with one message answered by the agent. */
  async function endUser(publicKey: string, user: string) {
    const res = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(publicKey), payload: { endUserExternalId: user } });
    const conversationId = res.json().conversationId as string;
    const { chat } = chatClient({ baseUrl: stack.origin, key: publicKey, conversationId });
    await chat.sendMessage({ text: 'Hello, my parcel never arrived' });
    return { conversationId, chat };
  }

  const detail = async (projectId: string, id: string) => (await adminApi<Detail>(stack.t, 'GET', `/projects/${projectId}/conversations/${id}`)).body;

  it('shows a request live, assigns, replies (stored as the person, streamed to the end user), hands back, and the agent answers again', async () => {
    const p = await project();
    const agent = await seedUser(stack.t, { role: 'member', memberships: [{ projectId: p.project.id, role: 'agent' }], name: 'Dana Reyes' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, agent.email, agent.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/conversations`);
    await page.getByRole('navigation', { name: 'Inbox' }).getByRole('link', { name: 'Waiting for a person' }).click();
    expect(page.url()).toContain('handoff=requested');
    await page.getByText('Nobody is waiting for a person.').waitFor();
    await page.locator('.live-note[data-live="live"]').waitFor();

    // The end user talks to the agent, then asks for a person through the runtime API: it appears without a reload.
    const { conversationId: id, chat } = await endUser(p.publicKey, 'cust-9');
    const asked = await stack.t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey), payload: { reason: 'Parcel lost' } });
    expect(asked.statusCode).toBe(200);
    const row = page.getByRole('list', { name: 'Conversations' }).locator(`li[data-conversation-id="${id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/waiting for a person[\s\S]*Parcel lost/);
    await expectAccessible(page, 'Inbox: waiting for a person');
    await screenshot(page, `inbox-waiting-${dialect.name}`);

    // Assign to me
    await row.getByRole('link').click();
    const panel = page.getByRole('region', { name: 'Waiting for a person' });
    await panel.waitFor();
    expect(await panel.textContent()).toContain('Parcel lost');
    await page.getByRole('button', { name: 'Assign to me' }).click();
    await page.getByRole('heading', { name: 'With you' }).waitFor();
    expect((await detail(p.project.id, id)).conversation.handoff).toMatchObject({ status: 'active', assignee: { id: agent.id, name: 'Dana Reyes' } });
    expect(await page.getByRole('button', { name: 'Assign to me' }).count()).toBe(0);

    // The end user's widget listens on the conversation's event stream.
    const sse = await openSse(`${stack.origin}/api/v1/chat/conversations/${id}/events`, auth(p.publicKey));
    streams.push(sse);
    expect(sse.status).toBe(200);

    // A failed send (the network gone) keeps the text and says why, next to the box.
    const reply = page.getByLabel('Your reply');
    const text = 'Hi, I am Dana. I have found your parcel: it arrives tomorrow.';
    await page.route('**/conversations/*/messages', (route) => route.abort());
    await reply.fill(text);
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('.reply-box [role="alert"]').waitFor();
    expect(await reply.inputValue()).toBe(text);
    expect(await reply.getAttribute('aria-invalid')).toBe('true');
    await page.unroute('**/conversations/*/messages');
    // Sent with the keyboard this time.
    await reply.focus();
    await page.keyboard.press('Control+Enter');
    const mine = page.getByRole('list', { name: 'Transcript' }).locator('li.msg.human');
    await mine.waitFor();
    expect(await mine.locator('.msg-head strong').textContent()).toBe('Dana Reyes');
    expect(await mine.locator('.bubble').textContent()).toContain('arrives tomorrow');
    await expect.poll(() => reply.inputValue()).toBe('');
    expect(await page.locator('.reply-box [role="alert"]').count()).toBe(0);

    // Stored as the person, and streamed to the end user with their name.
    const stored = (await detail(p.project.id, id)).messages.at(-1)!;
    expect(stored).toMatchObject({ role: 'assistant', content: text, author: { type: 'human', id: agent.id, name: 'Dana Reyes' } });
    const streamed = await sse.next((e) => e.event === 'message' && JSON.parse(e.data).message.id === stored.id);
    expect(JSON.parse(streamed.data).message).toMatchObject({ content: text, author: { type: 'human', name: 'Dana Reyes' } });

    // The end user answers while handed off: no model answer, and the transcript shows it live.
    await chat.sendMessage({ text: 'Great, thank you Dana!' });
    await page.getByRole('list', { name: 'Transcript' }).locator('li.msg.user', { hasText: 'Great, thank you Dana!' }).waitFor();
    expect((await detail(p.project.id, id)).messages.at(-1)).toMatchObject({ role: 'user', content: 'Great, thank you Dana!' });
    await expectAccessible(page, 'Conversation with a person');
    await screenshot(page, `inbox-conversation-${dialect.name}`);

    // Hand back: the agent answers the next message with a real answer.
    await page.getByRole('button', { name: 'Hand back to the agent' }).click();
    await page.getByRole('heading', { name: 'The agent is answering' }).waitFor();
    expect((await detail(p.project.id, id)).conversation.handoff).toBeNull();
    await chat.sendMessage({ text: 'When are refunds paid back?' });
    const answer = (await detail(p.project.id, id)).messages.at(-1)!;
    expect(answer).toMatchObject({ role: 'assistant', author: { type: 'agent' } });
    expect(answer.content).toContain('five working days');
    await page.getByRole('list', { name: 'Transcript' }).locator('li.msg.assistant', { hasText: 'five working days' }).waitFor();
    await sse.next((e) => e.event === 'message' && JSON.parse(e.data).message.id === answer.id);

    // Closed by someone else while this person types: the send is refused, the text stays, and the page says why.
    // (Closed just as the reply is sent, so the page cannot have read the closed state before.)
    await reply.fill('One last note for you');
    await page.route('**/conversations/*/messages', async (route) => {
      expect((await adminApi(stack.t, 'POST', `/projects/${p.project.id}/conversations/${id}/close`)).status).toBe(200);
      await route.continue();
    });
    await page.getByRole('button', { name: 'Send reply' }).click();
    expect(await page.locator('.reply-box [role="alert"]').textContent()).toBe('Conversation is closed');
    await page.getByText('The conversation was closed: this reply cannot be sent.').waitFor();
    expect(await reply.inputValue()).toBe('One last note for you');
    expect(await page.getByRole('button', { name: 'Send reply' }).isDisabled()).toBe(true);

    // It left the inbox views.
    await page.getByRole('link', { name: '← All conversations' }).click();
    await page.getByRole('navigation', { name: 'Inbox' }).getByRole('link', { name: 'With a person' }).click();
    await page.getByText('No conversation is with a person.').waitFor();
    await context.close();
  }, 120_000);

  it('after the session ends and the user signs in again, the inbox follows the project live again', async () => {
    const p = await createProject(stack.t, {}, 'Session inbox shop');
    const agent = await seedUser(stack.t, { role: 'member', memberships: [{ projectId: p.project.id, role: 'agent' }] });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, agent.email, agent.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/conversations?handoff=requested`);
    await page.getByText('Nobody is waiting for a person.').waitFor();
    await page.locator('.live-note[data-live="live"]').waitFor();

    // The session ends on the server, and then the stream is cut (a restart, a proxy's timeout):
    // its reconnect is refused (401), and the page asks to sign in again.
    await stack.t.deps.store.db.deleteFrom('sessions').where('user_id', '=', agent.id).execute();
    stack.t.app.server.closeAllConnections();
    const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
    await dialog.waitFor();
    await page.locator('.live-note[data-live="offline"]').waitFor();
    await dialog.getByLabel('Password').fill(agent.password);
    await dialog.getByRole('button', { name: 'Sign in again' }).click();
    await dialog.waitFor({ state: 'detached' });

    // Live again, without a reload: a request made now shows up in the list.
    await page.locator('.live-note[data-live="live"]').waitFor();
    const created = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const id = created.json().conversationId as string;
    const asked = await stack.t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey), payload: { reason: 'Still there?' } });
    expect(asked.statusCode).toBe(200);
    await page.getByRole('list', { name: 'Conversations' }).locator(`li[data-conversation-id="${id}"]`).waitFor();
    await context.close();
  }, 120_000);

  it('lets a viewer see the inbox but not answer (the server refuses too), at 360 px', async () => {
    const p = await project();
    const viewer = await seedUser(stack.t, { role: 'member', memberships: [{ projectId: p.project.id, role: 'viewer' }] });
    const { conversationId: id } = await endUser(p.publicKey, 'cust-11');
    await stack.t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey), payload: {} });
    const context = await newContext(browser, 360);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/conversations?handoff=requested`);
    const row = page.getByRole('list', { name: 'Conversations' }).locator(`li[data-conversation-id="${id}"]`);
    await row.waitFor();
    await expectNoSidewaysScroll(page, 'Inbox');
    await row.getByRole('link').click();
    await page.getByRole('region', { name: 'Waiting for a person' }).waitFor();
    expect(await page.getByRole('button', { name: 'Assign to me' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Your reply').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send reply' }).isDisabled()).toBe(true);
    await page.getByText('Your role on this project can read conversations but not answer them.').waitFor();
    for (const [path, body] of [
      ['assign', {}],
      ['messages', { content: 'hello' }],
      ['handback', undefined],
    ] as const) {
      const refused = await callFromPage(page, 'POST', `/api/v1/admin/projects/${p.project.id}/conversations/${id}/${path}`, body);
      expect(refused, path).toEqual({ status: 403, body: { error: 'Forbidden' } });
    }
    expect((await detail(p.project.id, id)).conversation.handoff).toMatchObject({ status: 'requested' });
    await expectNoSidewaysScroll(page, 'Conversation in the inbox');
    await expectAccessible(page, 'Conversation in the inbox (viewer, 360 px)');
    await screenshot(page, `inbox-viewer-360-${dialect.name}`);
    await context.close();
  }, 120_000);
});
