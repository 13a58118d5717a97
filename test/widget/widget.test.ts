import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../fakes/openai-compatible.js';
import { startTcpProxy } from '../fakes/tcp-proxy.js';
import { createProject, dialects } from '../helper.js';
import { addKnowledge, ask, browserAvailable, hostPage, lastAnswer, launchBrowser, openHostPage, screenshot, startStack, type Stack } from './harness.js';

/**
 * The widget in a real browser, on a page of another origin, against the real server: chat, the
 * stream as it arrives, sources, feedback, history after a reload, stop, retry and errors.
 */
describe.skipIf(!browserAvailable()).each(dialects)('widget chat in chromium ($name)', (dialect) => {
  let stack: Stack;
  let fake: FakeOpenAICompatible;
  let worker: KnowledgeWorker;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    stack = await startStack(dialect, { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl });
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

  it('streams an answer into the panel as it arrives and sends page context without field values', async () => {
    const project = await createProject(stack.t, { model: 'openai-compatible:fake-model' });
    fake.enqueue({ text: ['Plans can ', 'be changed ', 'at any time ', 'from **Settings**.'], delayMs: 250 });
    const page = await openHostPage(context, stack.page(`stream-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    await page.locator('answerdesk-widget .launcher').click();
    // Record every text the answer bubble shows while it streams.
    await page.evaluate(() => {
      const w = window as unknown as { snapshots: string[] };
      w.snapshots = [];
      const root = document.querySelector('answerdesk-widget')!.shadowRoot!;
      new MutationObserver(() => {
        const bubbles = root.querySelectorAll('li.msg.assistant .bubble');
        const text = bubbles[bubbles.length - 1]?.textContent ?? '';
        if (text && w.snapshots[w.snapshots.length - 1] !== text) w.snapshots.push(text);
      }).observe(root, { subtree: true, childList: true, characterData: true });
    });
    await ask(page, 'Can I change my plan?');
    const answer = await lastAnswer(page);
    expect(answer).toMatchObject({ status: 'complete', text: 'Plans can be changed at any time from Settings.' });
    expect(await page.locator('answerdesk-widget li.msg.assistant strong').textContent()).toBe('Settings');
    const snapshots = await page.evaluate(() => (window as unknown as { snapshots: string[] }).snapshots);
    // Partial texts were on screen before the whole answer: it was rendered incrementally.
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    expect(snapshots[0].length).toBeLessThan(answer.text.length);
    expect(snapshots.at(-1)).toBe(answer.text);
    // The streamed words were announced to screen readers through the live region.
    // As the bubble shows them: the Markdown's marks are not read out.
    const spoken = await page.locator('answerdesk-widget [aria-live="polite"]').textContent();
    expect(spoken).toContain('from Settings.');
    expect(spoken).not.toContain('*');

    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    expect(sent).toContain('Billing help');
    expect(sent).toContain('Work e-mail');
    expect(sent).toContain('https://acme.example/pricing');
    expect(sent).not.toContain('private@secret.example');
    expect(sent).not.toContain('hunter2-secret');
    expect(sent).not.toContain('Password');
    await screenshot(page, `stream-${dialect.name}`);
  });

  it('shows sources, stores feedback for the streamed message, and brings the conversation back after a reload', async () => {
    const project = await createProject(stack.t);
    await addKnowledge(stack.t, project.project.id, {
      type: 'markdown',
      title: 'Refund policy',
      content: '# Refunds\n\nRefunds are issued within 14 days of purchase. Contact billing to request a refund.\n\n# Shipping\n\nWe ship worldwide in 3 to 5 business days.',
    });
    const url = stack.page(`sources-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey }));
    const page = await openHostPage(context, url);
    await ask(page, 'When are refunds issued?');
    const answer = await lastAnswer(page);
    expect(answer.status).toBe('complete');
    expect(answer.text).toContain('14 days');
    const sources = page.locator('answerdesk-widget li.msg.assistant .sources li');
    expect(await sources.count()).toBeGreaterThanOrEqual(1);
    expect(await sources.first().textContent()).toContain('Refund policy');
    expect(await page.locator('answerdesk-widget li.msg.assistant .tools li[data-tool="search_knowledge"]').count()).toBeGreaterThanOrEqual(1);

    await page.locator('answerdesk-widget button[data-rating="NEGATIVE"]').click();
    await page.locator('answerdesk-widget .feedback-form textarea').fill('Please mention store credit too.');
    await page.locator('answerdesk-widget .feedback-form button[type="submit"]').click();
    await page.locator('answerdesk-widget .thanks', { hasText: 'comment was sent' }).waitFor();
    const rows = await stack.t.deps.store.db.selectFrom('feedback').selectAll().where('project_id', '=', project.project.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ message_id: answer.messageId, rating: 'NEGATIVE', comment: 'Please mention store credit too.' });
    const stored = await stack.t.deps.store.db.selectFrom('messages').select(['role', 'conversation_id']).where('id', '=', answer.messageId!).executeTakeFirstOrThrow();
    expect(stored.role).toBe('assistant');
    expect(rows[0].conversation_id).toBe(stored.conversation_id);
    await screenshot(page, `sources-feedback-${dialect.name}`);

    await page.reload();
    await page.evaluate(() => (window as unknown as { widgetReady: Promise<void> }).widgetReady);
    await page.locator('answerdesk-widget .launcher').click();
    const restored = page.locator('answerdesk-widget li.msg');
    expect(await restored.count()).toBe(2);
    expect(await restored.first().textContent()).toContain('When are refunds issued?');
    expect(await restored.nth(1).locator('.bubble').textContent()).toContain('14 days');
    expect(await restored.nth(1).getAttribute('data-message-id')).toBe(answer.messageId);
    await screenshot(page, `history-restored-${dialect.name}`);
  });

  it('renders hostile Markdown from the model as inert text', async () => {
    const project = await createProject(stack.t, { model: 'openai-compatible:fake-model' });
    fake.enqueue({
      text: [
        'Sure! <img src=x onerror="window.__pwned=1"> ',
        '<script>window.__pwned=2</script> ',
        '[win a prize](javascript:window.__pwned=3) ',
        '![pixel](https://evil.example/track.png) and **bold**.',
      ],
    });
    const page = await openHostPage(context, stack.page(`hostile-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    await ask(page, 'Tell me something');
    const answer = await lastAnswer(page);
    expect(answer.status).toBe('complete');
    const found = await page.evaluate(() => {
      const root = document.querySelector('answerdesk-widget')!.shadowRoot!;
      const bubble = Array.from(root.querySelectorAll('li.msg.assistant .bubble')).at(-1)!;
      return {
        dangerous: bubble.querySelectorAll('img, script, iframe, svg, object, embed').length,
        handlers: Array.from(bubble.querySelectorAll('*')).filter((e) => Array.from(e.attributes).some((a) => /^on/i.test(a.name))).length,
        hrefs: Array.from(bubble.querySelectorAll('a')).map((a) => a.getAttribute('href')),
        pwned: (window as unknown as { __pwned?: number }).__pwned,
      };
    });
    expect(found).toEqual({ dangerous: 0, handlers: 0, hrefs: ['https://evil.example/track.png'], pwned: undefined });
    expect(answer.text).toContain('<img src=x onerror="window.__pwned=1">');
    expect(answer.text).toContain('win a prize');
  });

  it('stops a streaming answer with the stop button', async () => {
    const project = await createProject(stack.t, { model: 'openai-compatible:fake-model' });
    fake.enqueue({ text: Array.from({ length: 40 }, (_, i) => `word${i} `), delayMs: 150 });
    const page = await openHostPage(context, stack.page(`stop-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    await ask(page, 'Write a long answer');
    await page.locator('answerdesk-widget li.msg.assistant .bubble', { hasText: 'word1' }).waitFor();
    await page.locator('answerdesk-widget button.send.stop').click();
    const answer = await lastAnswer(page);
    expect(answer.status).toBe('stopped');
    expect(answer.text).not.toContain('word39');
    expect(await page.locator('answerdesk-widget .stopped').textContent()).toBe('Stopped.');
    // The composer is a send button again and takes the next question.
    expect(await page.locator('answerdesk-widget button.send').getAttribute('aria-label')).toBe('Send message');
  });

  it('shows the whole stored answer when the network cut its stream, instead of asking to send again', async () => {
    const project = await createProject(stack.t, { model: 'openai-compatible:fake-model' });
    // The browser reaches the API through a proxy that can drop every connection, as a network change does.
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.apiOrigin).port) });
    try {
      const apiVia = `http://127.0.0.1:${proxy.port}`;
      fake.enqueue({ text: Array.from({ length: 30 }, (_, i) => `word${i} `), delayMs: 100 });
      const page = await openHostPage(context, stack.page(`netcut-${dialect.name}`, hostPage({ apiOrigin: apiVia, apiKey: project.publicKey })));
      await ask(page, 'Tell me everything');
      await page.locator('answerdesk-widget li.msg.assistant .bubble', { hasText: 'word3' }).waitFor();
      proxy.setMode('refuse');
      const cut = await lastAnswer(page);
      expect(cut.status).toBe('error');
      expect(cut.text).not.toContain('word29');
      expect(await page.locator('answerdesk-widget li.msg.assistant .error-note').textContent()).toContain('The answer was interrupted.');
      proxy.setMode('forward');

      // The server finished the answer without the browser; the live stream reconnects and brings it.
      const answer = page.locator('answerdesk-widget li.msg.assistant').last();
      await answer.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
      expect(await answer.locator('.bubble').textContent()).toBe(Array.from({ length: 30 }, (_, i) => `word${i}`).join(' '));
      expect(await answer.getAttribute('data-message-id')).toBe(cut.messageId);
      expect(await answer.locator('.error-note').count()).toBe(0);
      expect(await answer.locator('button[data-rating="POSITIVE"]').count()).toBe(1);
      // Nothing was sent twice: one question, one answer, and that answer is the one on screen.
      const { conversation_id } = await stack.t.deps.store.db.selectFrom('messages').select('conversation_id').where('id', '=', cut.messageId!).executeTakeFirstOrThrow();
      const rows = await stack.t.deps.store.db.selectFrom('messages').select(['id', 'role', 'status']).where('conversation_id', '=', conversation_id).orderBy('seq').execute();
      expect(rows.map((r) => [r.role, r.status])).toEqual([
        ['user', 'complete'],
        ['assistant', 'complete'],
      ]);
      expect(rows[1].id).toBe(cut.messageId);
    } finally {
      await proxy.close();
    }
  });

  it('says in plain words when the rate limit is hit, and retries the message', async () => {
    const project = await createProject(stack.t, { model: 'openai-compatible:fake-model', rateLimits: { chat: 1 } });
    fake.enqueue({ text: 'First answer.' });
    const page = await openHostPage(context, stack.page(`limit-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    await ask(page, 'First question');
    expect((await lastAnswer(page)).status).toBe('complete');
    await ask(page, 'Second question');
    const failed = await lastAnswer(page);
    expect(failed.status).toBe('error');
    const note = page.locator('answerdesk-widget li.msg.assistant').last().locator('.error-note');
    expect(await note.textContent()).toMatch(/You're sending messages faster than we can answer\. Please wait \d+ seconds? and try again\./);
    expect(await note.getAttribute('role')).toBe('alert');
    await screenshot(page, `rate-limited-${dialect.name}`);

    // Lift the limit (as when the window passes) and retry from the error note.
    await stack.t.deps.store.db
      .updateTable('projects')
      .set({ settings: JSON.stringify({ model: 'openai-compatible:fake-model', rateLimits: { chat: 1000 } }) })
      .where('id', '=', project.project.id)
      .execute();
    fake.enqueue({ text: 'Second answer.' });
    await note.locator('button.retry').click();
    await page.locator('answerdesk-widget li.msg.assistant[data-status="complete"] .bubble', { hasText: 'Second answer.' }).waitFor();
    const userTexts = await page.locator('answerdesk-widget li.msg.user').allTextContents();
    expect(userTexts.at(-1)).toContain('Second question');
  });
}, 120_000);
