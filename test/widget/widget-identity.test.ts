import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUserId } from '../../src/lib/keys.js';
import { createProject, dialects } from '../helper.js';
import { ask, browserAvailable, hostPage, lastAnswer, launchBrowser, openHostPage, screenshot, startStack, type Stack } from './harness.js';

/**
 * Identity and history in a real browser: a verified user (user.hmac) gets their conversations
 * back and listed, an anonymous visitor gets the last one back, and people sharing one browser never
 * see each other's chats.
 */
describe.skipIf(!browserAvailable()).each(dialects)('widget identity and history in chromium ($name)', (dialect) => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    stack = await startStack(dialect);
    browser = await launchBrowser();
    // One browser profile for the whole file: the same localStorage is shared, as on a family computer.
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await stack?.close();
  });

  const messagesShown = (page: Page) => page.locator('answerdesk-widget li.msg').allTextContents();

  it('verifies the user, keeps each person to their own conversations, and reset() forgets them', async () => {
    const project = await createProject(stack.t, { identityVerification: 'required' });
    const user = (id: string, name: string) => ({ id, name, email: `${id}@example.com`, hmac: signUserId(project.hmacSecret, id) });
    const page = (name: string, u?: ReturnType<typeof user>) =>
      stack.page(`${name}-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey, user: u }));
    const alice = user('alice-1', 'Alice');
    const bob = user('bob-2', 'Bob');

    // Alice signs in and chats; every call carries her HMAC, which the project requires.
    const a = await openHostPage(context, page('alice', alice));
    await ask(a, 'Hello, I am Alice');
    expect((await lastAnswer(a)).status).toBe('complete');
    const aliceRow = await stack.t.deps.store.db.selectFrom('end_users').selectAll().where('project_id', '=', project.project.id).where('external_id', '=', 'alice-1').executeTakeFirstOrThrow();
    expect(aliceRow.verified_at).not.toBeNull();
    expect(aliceRow).toMatchObject({ email: 'alice-1@example.com', name: 'Alice' });
    const aliceConvs = await stack.t.deps.store.db.selectFrom('conversations').selectAll().where('end_user_id', '=', aliceRow.id).execute();
    expect(aliceConvs).toHaveLength(1);
    const aliceConversation = aliceConvs[0].id;

    // A second conversation, so the list has two entries.
    await a.locator('answerdesk-widget button[aria-label="New conversation"]').click();
    await ask(a, 'Second topic from Alice');
    expect((await lastAnswer(a)).status).toBe('complete');

    // Reload: her last conversation is back; the history screen lists both, newest first, and reopens the first.
    await a.reload();
    await a.evaluate(() => (window as unknown as { widgetReady: Promise<void> }).widgetReady);
    await a.locator('answerdesk-widget .launcher').click();
    expect((await messagesShown(a))[0]).toContain('Second topic from Alice');
    await a.locator('answerdesk-widget button[aria-label="Previous conversations"]').click();
    const items = a.locator('answerdesk-widget .history-item');
    await items.first().waitFor();
    expect(await items.count()).toBe(2);
    // Newest first: the second conversation leads (previews show each conversation's last message).
    expect(await items.first().getAttribute('data-conversation-id')).not.toBe(aliceConversation);
    expect(await items.nth(1).getAttribute('data-conversation-id')).toBe(aliceConversation);
    await screenshot(a, `history-list-${dialect.name}`);
    await a.locator(`answerdesk-widget .history-item[data-conversation-id="${aliceConversation}"]`).click();
    await a.locator('answerdesk-widget li.msg.user', { hasText: 'Hello, I am Alice' }).waitFor();
    await a.close();

    // Bob on the same browser: nothing of Alice's, neither restored nor listed.
    const b = await openHostPage(context, page('bob', bob));
    await b.locator('answerdesk-widget .launcher').click();
    expect(await messagesShown(b)).toEqual([]);
    await b.locator('answerdesk-widget button[aria-label="Previous conversations"]').click();
    await b.locator('answerdesk-widget .empty', { hasText: 'No previous conversations yet.' }).waitFor();
    await ask(b, 'Bob here');
    expect((await lastAnswer(b)).status).toBe('complete');
    // Switching user in place (identify) swaps the conversation too.
    await b.evaluate((u) => (window as unknown as { AnswerDesk: { identify(u: unknown): Promise<void> } }).AnswerDesk.identify(u), alice);
    expect((await messagesShown(b)).join(' ')).not.toContain('Bob here');
    expect((await messagesShown(b)).join(' ')).toContain('Hello, I am Alice');
    // Logout: reset() forgets Alice's conversation on this browser.
    await b.evaluate(() => (window as unknown as { AnswerDesk: { reset(): void } }).AnswerDesk.reset());
    expect(await messagesShown(b)).toEqual([]);
    await b.close();

    const again = await openHostPage(context, page('alice', alice));
    await again.locator('answerdesk-widget .launcher').click();
    expect(await messagesShown(again)).toEqual([]);
    // Her conversations are still hers on the server: the list shows them.
    await again.locator('answerdesk-widget button[aria-label="Previous conversations"]').click();
    await again.locator('answerdesk-widget .history-item').first().waitFor();
    expect(await again.locator('answerdesk-widget .history-item').count()).toBe(2);
    await again.close();
  });

  it('switching users quickly: a verification that answers late does not lend its proof to the next user', async () => {
    const project = await createProject(stack.t, { identityVerification: 'required' });
    const dave = { id: 'dave-4', name: 'Dave', hmac: signUserId(project.hmacSecret, 'dave-4') };
    const erin = { id: 'erin-5', name: 'Erin', hmac: signUserId(project.hmacSecret, 'erin-5') };
    const page = await openHostPage(context, stack.page(`switch-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    // Dave's verification is slow to answer; Erin signs in meanwhile (a logout and a login in a row).
    await page.route('**/api/v1/identity/verify', async (route) => {
      if ((route.request().postDataJSON() as { userId: string }).userId === dave.id) await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    const sentProofs: Array<string | undefined> = [];
    page.on('request', (r) => {
      if (r.url().includes('/chat/')) sentProofs.push(r.headers()['x-user-hmac']);
    });
    await page.evaluate(
      ([first, second]) => {
        const w = window as unknown as { AnswerDesk: { identify(u: unknown): Promise<void> }; switched: Promise<unknown> };
        w.switched = Promise.all([w.AnswerDesk.identify(first), new Promise((resolve) => setTimeout(resolve, 100)).then(() => w.AnswerDesk.identify(second))]);
      },
      [dave, erin],
    );
    await page.evaluate(() => (window as unknown as { switched: Promise<unknown> }).switched);

    // Erin chats as Erin: every call carries her proof, and the conversation is hers.
    await ask(page, 'Erin here');
    expect((await lastAnswer(page)).status).toBe('complete');
    expect(sentProofs.length).toBeGreaterThan(0);
    expect(new Set(sentProofs)).toEqual(new Set([erin.hmac]));
    const db = stack.t.deps.store.db;
    const owners = await db.selectFrom('conversations').select('end_user_id').where('project_id', '=', project.project.id).execute();
    const erinRow = await db.selectFrom('end_users').select('id').where('project_id', '=', project.project.id).where('external_id', '=', erin.id).executeTakeFirstOrThrow();
    expect(owners.map((r) => r.end_user_id)).toEqual([erinRow.id]);
    await page.close();
  });

  it('gives an anonymous visitor their last conversation back, and not to a signed-in user', async () => {
    const project = await createProject(stack.t);
    const anonUrl = stack.page(`anon-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey }));
    const anon = await openHostPage(context, anonUrl);
    await ask(anon, 'Anonymous question');
    expect((await lastAnswer(anon)).status).toBe('complete');
    const conv = await stack.t.deps.store.db.selectFrom('conversations').selectAll().where('project_id', '=', project.project.id).execute();
    expect(conv).toHaveLength(1);
    expect(conv[0].end_user_id).toBeNull();
    await anon.reload();
    await anon.evaluate(() => (window as unknown as { widgetReady: Promise<void> }).widgetReady);
    await anon.locator('answerdesk-widget .launcher').click();
    expect((await messagesShown(anon))[0]).toContain('Anonymous question');
    await anon.close();

    const carol = { id: 'carol-3', hmac: signUserId(project.hmacSecret, 'carol-3') };
    const signedIn = await openHostPage(context, stack.page(`carol-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey, user: carol })));
    await signedIn.locator('answerdesk-widget .launcher').click();
    expect(await messagesShown(signedIn)).toEqual([]);
    await signedIn.close();

    // The same project on another API key's storage slot is another project: keys never share slots.
    const other = await createProject(stack.t);
    const elsewhere = await openHostPage(context, stack.page(`other-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: other.publicKey })));
    await elsewhere.locator('answerdesk-widget .launcher').click();
    expect(await messagesShown(elsewhere)).toEqual([]);
    await elsewhere.close();
  });
}, 120_000);
