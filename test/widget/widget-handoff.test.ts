import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../fakes/openai-compatible.js';
import { adminAuth, createProject, dialects } from '../helper.js';
import { addKnowledge, ask, browserAvailable, hostPage, lastAnswer, launchBrowser, openHostPage, screenshot, startStack, type Stack } from './harness.js';

/**
 * The widget's handoff, a person's live replies, citations and the home screen, in a real browser on
 * a page of another origin, against the real server.
 */
describe.skipIf(!browserAvailable()).each(dialects)('widget handoff and citations in chromium ($name)', (dialect) => {
  let stack: Stack;
  let fake: FakeOpenAICompatible;
  let worker: KnowledgeWorker;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    stack = await startStack(dialect, { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await stack?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterEach(async () => {
    await context.close();
  });

  const admin = (projectId: string, conversationId: string, action: string, payload?: Record<string, unknown>) =>
    stack.t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${projectId}/conversations/${conversationId}/${action}`,
      headers: adminAuth(),
      ...(payload ? { payload } : {}),
    });

  it('talk to a person: waiting note with office hours, no answer while handed off, a person’s reply arrives live with their name, then the agent again', async () => {
    const p = await createProject(stack.t, {
      model: 'openai-compatible:fake',
      handoff: { officeHoursText: 'We reply Mon–Fri, 9:00–17:00.' },
    });
    const page = await openHostPage(context, stack.page(`handoff-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: p.publicKey })));
    fake.enqueue({ text: 'I can help with billing.' });
    await ask(page, 'Hello, a billing question');
    await lastAnswer(page);

    const button = page.locator('answerdesk-widget button.ask-person');
    await expect(button.textContent()).resolves.toBe('Talk to a person');
    await button.click();
    const note = page.locator('answerdesk-widget .handoff .note');
    await note.waitFor();
    expect(await note.textContent()).toBe('A person will reply here. We reply Mon–Fri, 9:00–17:00.');
    expect(await button.count()).toBe(0);
    const conversationId = await page.evaluate(() => JSON.parse(Object.entries(localStorage).find(([k]) => k.includes('answerdesk'))![1]).conversationId as string);
    const stored = await stack.t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', conversationId).executeTakeFirstOrThrow();
    expect(stored.handoff_status).toBe('requested');

    // A message while waiting: shown, stored, no model call, no empty answer bubble left behind.
    const calls = fake.requests.length;
    await page.locator('answerdesk-widget textarea#ad-input').fill('My invoice is wrong');
    await page.locator('answerdesk-widget textarea#ad-input').press('Enter');
    await page.locator('answerdesk-widget li.msg.user', { hasText: 'My invoice is wrong' }).waitFor();
    await page.waitForFunction(() => !document.querySelector('answerdesk-widget')!.shadowRoot!.querySelector('li.msg.assistant[data-status="streaming"]'));
    expect(await page.locator('answerdesk-widget li.msg.assistant').count()).toBe(1);
    expect(fake.requests.length).toBe(calls);

    // A person replies through the admin API: it reaches the open widget through the event stream.
    const reply = await admin(p.project.id, conversationId, 'messages', { content: 'Hi, I have corrected invoice **42**.', author: { name: 'Dana Scully' } });
    expect(reply.statusCode).toBe(201);
    const human = page.locator('answerdesk-widget li.msg.assistant.human');
    await human.waitFor();
    expect(await human.locator('.avatar').textContent()).toBe('DS');
    expect(await human.locator('.name').textContent()).toBe('Dana Scully');
    expect(await human.locator('.bubble').textContent()).toBe('Hi, I have corrected invoice 42.');
    await page.locator('answerdesk-widget .handoff .note', { hasText: "You're chatting with Dana Scully." }).waitFor();
    // Each message once, although the stream replays the conversation when it connects.
    expect(await page.locator('answerdesk-widget li.msg.user').count()).toBe(2);
    await screenshot(page, `handoff-${dialect.name}`);

    // Handed back: the button returns and the agent answers the next message.
    await admin(p.project.id, conversationId, 'handback');
    await button.waitFor();
    fake.enqueue({ text: 'Anything else about billing?' });
    await ask(page, 'Thanks Dana');
    expect(await lastAnswer(page)).toMatchObject({ status: 'complete', text: 'Anything else about billing?' });
    const history = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(history).toContain('Hi, I have corrected invoice **42**.');

    // After a reload the person's reply is still theirs.
    await page.reload();
    await page.evaluate(() => (window as unknown as { widgetReady: Promise<void> }).widgetReady);
    await page.locator('answerdesk-widget .launcher').click();
    expect(await page.locator('answerdesk-widget li.msg.assistant.human .name').textContent()).toBe('Dana Scully');
  });

  it('a teammate closes the conversation while the visitor waits: the widget says it ended, and the next message starts a new one', async () => {
    const p = await createProject(stack.t, { model: 'openai-compatible:fake' });
    const page = await openHostPage(context, stack.page(`handoff-closed-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: p.publicKey })));
    fake.enqueue({ text: 'I can help with billing.' });
    await ask(page, 'Hello, a billing question');
    await lastAnswer(page);
    await page.locator('answerdesk-widget button.ask-person').click();
    const note = page.locator('answerdesk-widget .handoff .note');
    await note.filter({ hasText: 'A person will reply here.' }).waitFor();
    const first = await page.evaluate(() => JSON.parse(Object.entries(localStorage).find(([k]) => k.includes('answerdesk'))![1]).conversationId as string);

    expect((await admin(p.project.id, first, 'close')).statusCode).toBe(200);
    await note.filter({ hasText: 'This conversation has ended. Send a message to start a new one.' }).waitFor();
    expect(await page.locator('answerdesk-widget button.ask-person').count()).toBe(0);
    const events = await page.evaluate(() => (window as unknown as { widgetEvents: Array<{ name: string; payload: unknown }> }).widgetEvents);
    expect(events.filter((e) => e.name === 'conversation:end').map((e) => e.payload)).toEqual([{ conversationId: first }]);
    // The old messages stay on screen; the next one goes to a new conversation, answered by the agent.
    fake.enqueue({ text: 'Welcome back.' });
    await ask(page, 'One more question');
    expect(await lastAnswer(page)).toMatchObject({ status: 'complete', text: 'Welcome back.' });
    const second = await page.evaluate(() => JSON.parse(Object.entries(localStorage).find(([k]) => k.includes('answerdesk'))![1]).conversationId as string);
    expect(second).not.toBe(first);
    const stored = await stack.t.deps.store.db.selectFrom('messages').select('content').where('conversation_id', '=', second).orderBy('seq').execute();
    expect(stored.map((m) => m.content)).toEqual(['One more question', 'Welcome back.']);
    expect(await page.locator('answerdesk-widget li.msg.user').count()).toBe(2);
    await page.locator('answerdesk-widget button.ask-person').waitFor();
  });

  it('hides "Talk to a person" when the project turned handoff off; the builtin model hands off when asked in words', async () => {
    const off = await createProject(stack.t, { handoff: { enabled: false } });
    const page = await openHostPage(context, stack.page(`handoff-off-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: off.publicKey })));
    await page.locator('answerdesk-widget .launcher').click();
    expect(await page.locator('answerdesk-widget button.ask-person').count()).toBe(0);

    const on = await createProject(stack.t, {});
    const page2 = await openHostPage(context, stack.page(`handoff-words-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: on.publicKey })));
    await ask(page2, 'I want to speak to a real person');
    expect((await lastAnswer(page2)).text).toContain('a person from our team');
    await page2.locator('answerdesk-widget .handoff .note', { hasText: 'A person will reply here.' }).waitFor();
  });

  it('numbers citations: [n] links to source chip n, and a source with a URL opens it', async () => {
    const p = await createProject(stack.t, { model: 'openai-compatible:fake' });
    const articleUrl = stack.page(
      `refunds-${dialect.name}`,
      '<!doctype html><html><head><title>Refund policy</title></head><body><main><h1>Refund policy</h1><p>Refunds are paid within 5 business days of the return arriving.</p></main></body></html>',
    );
    await addKnowledge(stack.t, p.project.id, { type: 'url', url: articleUrl });
    fake.enqueue(
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'refunds paid business days' } }] },
      { text: 'Refunds are paid within 5 business days [1]. Codes like `[1]` stay as they are.' },
    );
    const page = await openHostPage(context, stack.page(`cite-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: p.publicKey })));
    await ask(page, 'How long do refunds take?');
    await lastAnswer(page);
    const chip = page.locator('answerdesk-widget li.msg.assistant .sources li').first();
    expect(await chip.getAttribute('data-n')).toBe('1');
    expect(await chip.locator('.num').textContent()).toBe('1');
    const cite = page.locator('answerdesk-widget li.msg.assistant .bubble a.cite');
    expect(await cite.count()).toBe(1);
    expect(await cite.textContent()).toBe('1');
    // The chip's link and the marker's are the same (a heading anchor may follow the page URL).
    const href = (await cite.getAttribute('href'))!;
    expect(href.startsWith(articleUrl)).toBe(true);
    expect(await chip.locator('a').getAttribute('href')).toBe(href);
    expect(await page.locator('answerdesk-widget li.msg.assistant .bubble code').textContent()).toBe('[1]');
    const [opened] = await Promise.all([context.waitForEvent('page'), cite.click()]);
    await opened.waitForLoadState();
    expect(opened.url()).toBe(href);
  });

  it('offers starter questions, does not promise topics when there are none, and relabels the launcher while open', async () => {
    const plain = await createProject(stack.t, { model: 'openai-compatible:fake', widget: { fabText: 'Help' } });
    const page = await openHostPage(context, stack.page(`home-plain-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: plain.publicKey })));
    const launcher = page.locator('answerdesk-widget .launcher');
    expect(await launcher.locator('.fab-text').textContent()).toBe('Help');
    await launcher.click();
    expect(await page.locator('answerdesk-widget .home p').first().textContent()).toBe('Ask us anything. We usually answer right away.');
    expect(await launcher.getAttribute('aria-label')).toBe('Close support chat');
    expect(await launcher.locator('.fab-text').textContent()).toBe('Close');

    const starters = await createProject(stack.t, { model: 'openai-compatible:fake', widget: { starterQuestions: ['How do refunds work?', 'Where is my order?'] } });
    const page2 = await openHostPage(context, stack.page(`home-starters-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: starters.publicKey })));
    await page2.locator('answerdesk-widget .launcher').click();
    expect(await page2.locator('answerdesk-widget .home p').first().textContent()).toBe('Ask us anything, or pick a topic below.');
    expect(await page2.locator('answerdesk-widget button.starter').allTextContents()).toEqual(['How do refunds work?', 'Where is my order?']);
    fake.enqueue({ text: 'Refunds take 5 days.' });
    await page2.locator('answerdesk-widget button.starter').first().click();
    expect(await lastAnswer(page2)).toMatchObject({ status: 'complete', text: 'Refunds take 5 days.' });
    expect(await page2.locator('answerdesk-widget li.msg.user').textContent()).toContain('How do refunds work?');
  });
});
