import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedProject } from '../../src/projects/projects.js';
import { auth, createProject, dialects } from '../helper.js';
import { browserAvailable, launchBrowser, newContext, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, seedUser } from './project-pages.js';

/** What has the keyboard focus: its tag and text, or its label. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'body';
    const name = (a.getAttribute('aria-label') ?? a.textContent ?? '').trim();
    return name ? `${a.tagName.toLowerCase()}: ${name}` : a.tagName.toLowerCase();
  });

/**
 * Keyboard use of the dashboard in chromium: a control that goes away after it is pressed hands the
 * focus on to what comes next, rather than dropping it on the page's body (where a keyboard or
 * screen reader user starts again from the top of the page).
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard focus ($name)', (dialect) => {
  let stack: DashboardStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startDashboard(dialect);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  async function adminPage(p: CreatedProject): Promise<Page> {
    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const page = await (await newContext(browser)).newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    return page;
  }

  it('Cancel in an in-place confirmation gives the focus back to the button that asked', async () => {
    const p = await createProject(stack.t, {}, 'Focus shop');
    expect((await adminApi(stack.t, 'POST', `/projects/${p.project.id}/skills`, { name: 'Track an order', description: 'Where is my parcel', instructions: 'Ask for the number.' })).status).toBe(201);
    const page = await adminPage(p);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/skills`);
    await page.getByRole('button', { name: 'Delete', exact: true }).focus();
    await page.keyboard.press('Enter');
    expect(await focused(page)).toBe('button: Cancel');
    await page.keyboard.press('Enter');
    expect(await focused(page)).toBe('button: Delete');
    // Nothing was deleted, and the next Enter asks again.
    await page.keyboard.press('Enter');
    expect(await focused(page)).toBe('button: Cancel');
    expect((await adminApi<{ skills: unknown[] }>(stack.t, 'GET', `/projects/${p.project.id}/skills`)).body.skills).toHaveLength(1);
    await page.context().close();
  });

  /** The focused control and the row it is in (the row's `data-*` id, or its text). */
  const focusedRow = (page: Page) =>
    page.evaluate(() => {
      const a = document.activeElement;
      const row = a?.closest('tr, li');
      return row ? (row.getAttribute('data-skill-id') ?? row.getAttribute('data-user-email') ?? row.textContent ?? '') : null;
    });

  it('a confirmed Delete or Revoke that removes its row hands the focus to the next row’s same button, else the list’s heading', async () => {
    const p = await createProject(stack.t, {}, 'Removal focus shop');
    for (const name of ['Track an order', 'Return an item', 'Change an address'])
      expect((await adminApi(stack.t, 'POST', `/projects/${p.project.id}/skills`, { name, description: name, instructions: 'Help.' })).status).toBe(201);
    const page = await adminPage(p);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/skills`);
    const rows = page.locator('tr[data-skill-id]');
    await expect.poll(() => rows.count()).toBe(3);
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-skill-id')!));
    /** Delete, from the keyboard: Enter asks, Shift+Tab reaches the confirmation, Enter deletes. */
    const remove = async (id: string) => {
      await page.locator(`tr[data-skill-id="${id}"]`).getByRole('button', { name: 'Delete', exact: true }).focus();
      await page.keyboard.press('Enter');
      expect(await focused(page)).toBe('button: Cancel');
      await page.keyboard.press('Shift+Tab');
      expect(await focused(page)).toMatch(/^button: Delete ./);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator(`tr[data-skill-id="${id}"]`).count()).toBe(0);
    };
    // The middle one: the next row's Delete.
    await remove(ids[1]);
    await expect.poll(() => focused(page)).toBe('button: Delete');
    expect(await focusedRow(page)).toBe(ids[2]);
    // The last one: the row before.
    await remove(ids[2]);
    await expect.poll(() => focused(page)).toBe('button: Delete');
    expect(await focusedRow(page)).toBe(ids[0]);
    // The only one: the page's heading.
    await remove(ids[0]);
    await expect.poll(() => focused(page)).toBe('h1: Skills');
    expect((await adminApi<{ skills: unknown[] }>(stack.t, 'GET', `/projects/${p.project.id}/skills`)).body.skills).toHaveLength(0);

    // A revoked key stays listed, without its button: the next key's Revoke.
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/widget`);
    const keyRows = page.locator('section[aria-labelledby="keys-title"] tbody tr');
    await expect.poll(() => keyRows.count()).toBe(2);
    const second = (await keyRows.nth(1).locator('code').textContent())!;
    // (Once the preview has started: it opens the widget inside its frame.)
    await page.frameLocator('iframe').locator('body[data-preview-generation]').waitFor();
    await keyRows.nth(0).getByRole('button', { name: /^Revoke / }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await keyRows.nth(0).getByText('Revoked').waitFor();
    await expect.poll(() => focused(page)).toBe(`button: Revoke ${second}`);
    // The last live key: the list's heading.
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await keyRows.nth(1).getByText('Revoked').waitFor();
    await expect.poll(() => focused(page)).toBe('h2: API keys');

    // Eval suites deleted from their list: the next suite's Delete, then the page's title.
    for (const name of ['Returns', 'Shipping'])
      expect((await adminApi(stack.t, 'POST', `/projects/${p.project.id}/evals`, { name, cases: [{ question: `What about ${name.toLowerCase()}?` }] })).status).toBe(201);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/evals`);
    const suiteRows = page.locator('tr[data-eval-id]');
    await expect.poll(() => suiteRows.count()).toBe(2);
    const deleteSuite = async (name: string) => {
      await page.getByRole('button', { name: `Delete ${name}`, exact: true }).focus();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Shift+Tab');
      expect(await focused(page)).toBe(`button: Delete “${name}” and its runs`);
      await page.keyboard.press('Enter');
    };
    await deleteSuite('Shipping');
    await expect.poll(() => suiteRows.count()).toBe(1);
    await expect.poll(() => focused(page)).toBe('button: Delete Returns');
    await deleteSuite('Returns');
    await expect.poll(() => suiteRows.count()).toBe(0);
    await expect.poll(() => focused(page)).toBe('h1: Evals');
    await page.context().close();
  });

  it('removing a user or revoking an invite hands the focus to the next row’s same button', async () => {
    await createProject(stack.t, {}, 'Team focus shop');
    const owner = await seedUser(stack.t, 'owner');
    const leaving = await seedUser(stack.t, 'owner');
    const invited = [`first-${Date.now()}@example.com`, `second-${Date.now()}@example.com`];
    for (const email of invited) expect((await adminApi(stack.t, 'POST', '/invites', { email, role: 'owner' })).status).toBe(201);
    const page = await (await newContext(browser)).newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    await page.goto(`${stack.origin}/dashboard/users`);

    const row = page.locator(`li[data-user-email="${leaving.email}"]`);
    await row.getByRole('button', { name: /^Remove / }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toMatch(/^button: Yes, remove /);
    await page.keyboard.press('Enter');
    await row.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toMatch(/^button: Remove /);
    expect(await focusedRow(page)).not.toBe(leaving.email);

    // Open invites, newest first: revoking the first moves to the other's Revoke, then to the page's title once none is left.
    const invites = page.locator('section[aria-labelledby="invites-title"] li');
    const revokeOf = (email: string) => page.getByRole('button', { name: `Revoke the invite of ${email}` });
    await revokeOf(invited[1]).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => invites.count()).toBe(1);
    await expect.poll(() => focused(page)).toBe(`button: Revoke the invite of ${invited[0]}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => invites.count()).toBe(0);
    await expect.poll(() => focused(page)).toBe('h1: Users');
    await page.context().close();
  });

  it('typing in the Widget form keeps the focus there while the preview follows the changes', async () => {
    const p = await createProject(stack.t, {}, 'Preview focus shop');
    const page = await adminPage(p);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/widget`);
    const preview = page.frameLocator('iframe').locator('body[data-preview-generation]');
    await preview.waitFor();
    const text = page.getByLabel('Launcher text');
    const generation = async () => Number(await preview.getAttribute('data-preview-generation'));
    const before = await generation();
    await text.focus();
    await page.keyboard.type('Hel');
    // The preview starts the widget again with the new text (and opens it): the focus stays in the form.
    await expect.poll(generation).toBeGreaterThan(before);
    expect(await focused(page)).toBe('input');
    await page.keyboard.type('p!');
    expect(await text.inputValue()).toBe('Help!');
    await page.context().close();
  });

  it('Cancel on a gap’s answer form gives the focus back to its Answer this', async () => {
    const p = await createProject(stack.t, { model: 'builtin' }, 'Gaps focus shop');
    const created = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    const asked = await stack.t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Do you offer gift wrapping?' }] },
    });
    expect(asked.statusCode).toBe(200);
    const page = await adminPage(p);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/knowledge/gaps`);
    await page.getByRole('button', { name: 'Answer this' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('textarea');
    await page.keyboard.type('We do, for 3 euros.');
    await page.getByRole('button', { name: 'Cancel' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('button: Answer this');
    await page.context().close();
  });

  it('Assign to me, Hand back and Close, pressed from the keyboard, leave the focus on what says the new state', async () => {
    const p = await createProject(stack.t, {}, 'Inbox focus shop');
    const created = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    const asked = await stack.t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${conversationId}/handoff`, headers: auth(p.publicKey), payload: { reason: 'My parcel is lost' } });
    expect(asked.statusCode).toBe(200);
    const agent = await seedUser(stack.t, { projectId: p.project.id, role: 'agent' });
    const page = await (await newContext(browser)).newPage();
    await signIn(page, stack.origin, agent.email, agent.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/conversations/${conversationId}`);
    await page.getByRole('heading', { name: 'Waiting for a person' }).waitFor();

    await page.getByRole('button', { name: 'Assign to me' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h2: With you');
    expect((await adminApi<{ conversation: { handoff: { status: string } } }>(stack.t, 'GET', `/projects/${p.project.id}/conversations/${conversationId}`)).body.conversation.handoff.status).toBe('active');

    await page.getByRole('button', { name: 'Hand back to the agent' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h2: The agent is answering');

    // Closing cannot be undone: Enter asks first (the focus on Cancel), and the confirmation closes.
    await page.getByRole('button', { name: 'Close conversation' }).focus();
    await page.keyboard.press('Enter');
    expect(await focused(page)).toBe('button: Cancel');
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe('button: Yes, close it for good');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h1: Conversation with an anonymous visitor');
    expect((await adminApi<{ conversation: { status: string } }>(stack.t, 'GET', `/projects/${p.project.id}/conversations/${conversationId}`)).body.conversation.status).toBe('CLOSED');
    await page.context().close();
  });

  it('each page has its own title, and arriving on another page puts the focus on its title', async () => {
    const p = await createProject(stack.t, {}, 'Titles shop');
    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const page = await (await newContext(browser)).newPage();
    await page.goto(`${stack.origin}/dashboard/login`);
    expect(await page.title()).toBe('Sign in · AnswerDesk');
    await signIn(page, stack.origin, admin.email, admin.password);
    await expect.poll(() => page.title()).toBe('Conversations · AnswerDesk');

    // A link of the navigation, from the keyboard: the new page's title has the focus.
    await page.getByRole('link', { name: 'Knowledge' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h1: Knowledge');
    expect(await page.title()).toBe('Knowledge · AnswerDesk');
    await page.getByRole('link', { name: 'Gaps' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h1: Knowledge gaps');
    expect(await page.title()).toBe('Knowledge gaps · AnswerDesk');

    // Back and Forward: each page comes back with its own title.
    await page.goBack();
    await expect.poll(() => page.title()).toBe('Knowledge · AnswerDesk');
    await expect.poll(() => focused(page)).toBe('h1: Knowledge');
    await page.goBack();
    await expect.poll(() => page.title()).toBe('Conversations · AnswerDesk');
    await page.goForward();
    await expect.poll(() => page.title()).toBe('Knowledge · AnswerDesk');

    // Filters change the address's query, not the page: the focus stays on the button pressed.
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByLabel('Status').selectOption('CLOSED');
    await page.getByRole('button', { name: 'Apply filters' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/status=CLOSED/);
    expect(await focused(page)).toBe('button: Apply filters');
    await page.context().close();
  });
});
