import { createHmac } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Analytics } from '../../src/api/insight/schema.js';
import { listUsers } from '../../src/accounts/users.js';
import { appendMessage } from '../../src/conversations/messages.js';
import { adminAuth, auth, createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, seedUser, signIn, startDashboard, type DashboardStack } from './browser.js';
import { expectNoSidewaysScroll } from './project-pages.js';

const PAGES = ['Conversations', 'Knowledge', 'Actions', 'Skills', 'Widget', 'Analytics', 'Activity', 'Settings'];

/** The pages of the dashboard's own frame, each through its main path against the real server. */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard pages in chromium ($name)', (dialect) => {
  let stack: DashboardStack;
  let browser: Browser;
  let context: BrowserContext;
  beforeAll(async () => {
    stack = await startDashboard(dialect);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });
  beforeEach(async () => {
    context = await newContext(browser);
  });
  afterEach(async () => {
    await context.close();
  });

  async function ownerPage(): Promise<Page> {
    const owner = await seedUser(stack.t, { role: 'owner' });
    const page = await context.newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    return page;
  }
  const getProject = async (id: string) => stack.t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}`, headers: adminAuth() });

  it('a session that ends while a form is being filled keeps what was typed, and signing in again saves it', async () => {
    const { project } = await createProject(stack.t, {}, 'Session shop');
    const owner = await seedUser(stack.t, { role: 'owner' });
    const page = await context.newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/settings`);
    await page.getByLabel('Instructions').fill('Keep it short and kind.');
    // The session ends on the server (expiry, a sign-out elsewhere): the next call answers 401.
    await stack.t.deps.store.db.deleteFrom('sessions').where('user_id', '=', owner.id).execute();
    await page.getByRole('button', { name: 'Save settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
    await dialog.waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/p/${project.id}/settings`);
    expect(await page.getByLabel('Instructions').inputValue()).toBe('Keep it short and kind.');
    await expect(dialog.getByLabel('Email').inputValue()).resolves.toBe(owner.email);
    await expectAccessible(page, 'session ended');
    await dialog.getByLabel('Password').fill('not the password');
    await dialog.getByRole('button', { name: 'Sign in again' }).click();
    await dialog.getByRole('alert').waitFor();
    await dialog.getByLabel('Password').fill(owner.password);
    await dialog.getByRole('button', { name: 'Sign in again' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Same user, same page, same input: saving now works.
    expect(await page.getByLabel('Instructions').inputValue()).toBe('Keep it short and kind.');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await getProject(project.id)).json().project.settings.instructions).toBe('Keep it short and kind.');
    // Signing out is not a session that ended: it leads to the sign-in page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to AnswerDesk' }).waitFor();
  });

  it('Settings: shows an API error next to its field without losing input, saves, and deletes with a typed confirmation', async () => {
    const { project } = await createProject(stack.t, {}, 'Settings shop');
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/settings`);
    await page.getByLabel('Instructions').fill('Answer in two sentences.');
    await page.getByLabel('Model').fill('gpt-nonsense');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const model = page.getByLabel('Model');
    await expect.poll(() => model.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await model.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent()).toContain('Expected builtin');
    // Nothing typed was lost, and nothing was stored.
    expect(await page.getByLabel('Instructions').inputValue()).toBe('Answer in two sentences.');
    expect((await getProject(project.id)).json().project.settings.instructions).toBeUndefined();

    await model.fill('builtin');
    await page.getByLabel('Allowed origins').fill('https://shop.example\nhttps://help.shop.example');
    await page.getByLabel('Identity verification').selectOption('required');
    await page.getByLabel('Chat messages').fill('45');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await getProject(project.id)).json().project.settings).toMatchObject({
      model: 'builtin',
      instructions: 'Answer in two sentences.',
      identityVerification: 'required',
      allowedOrigins: ['https://shop.example', 'https://help.shop.example'],
      rateLimits: { chat: 45 },
    });
    await expectAccessible(page, 'settings');
    await screenshot(page, `settings-${dialect.name}`);

    const remove = page.getByRole('button', { name: 'Delete project' });
    await page.getByLabel(/Type the project name/).fill('Settings sho');
    expect(await remove.isDisabled()).toBe(true);
    await page.getByLabel(/Type the project name/).fill('Settings shop');
    await remove.click();
    await page.waitForURL((url) => !url.pathname.includes(project.id));
    expect((await getProject(project.id)).statusCode).toBe(404);
  });

  it('Settings: clearing Model and Conversation TTL returns the project to the defaults', async () => {
    const { project } = await createProject(stack.t, { model: 'builtin', conversationTtlMinutes: 60, instructions: 'Be brief.' }, 'Defaults shop');
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/settings`);
    const model = page.getByLabel('Model');
    const ttl = page.getByLabel('Conversation TTL (minutes)');
    await expect.poll(() => model.inputValue()).toBe('builtin');
    expect(await ttl.inputValue()).toBe('60');
    await model.fill('');
    await ttl.fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    // Stored without them, so the server's model and the 1440-minute TTL apply; the rest is kept.
    expect((await getProject(project.id)).json().project.settings).toEqual({ instructions: 'Be brief.', identityVerification: 'optional', allowedOrigins: [], rateLimits: {} });
    expect(await model.inputValue()).toBe('');
    expect(await ttl.inputValue()).toBe('');
    await page.reload();
    await expect.poll(() => page.getByLabel('Instructions').inputValue()).toBe('Be brief.');
    expect(await page.getByLabel('Model').inputValue()).toBe('');
    expect(await page.getByLabel('Conversation TTL (minutes)').inputValue()).toBe('');
  });

  it('Widget: previews the real widget with unsaved values, saves them, creates and revokes keys, and rotates the HMAC secret', async () => {
    const created = await createProject(stack.t, {}, 'Widget shop');
    const { project } = created;
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/widget`);
    const preview = page.frameLocator('iframe[title="Live preview of the widget"]');
    // The real widget script, mounted in the preview with the form's values: it opens on its own.
    await preview.locator('answerdesk-widget .launcher').waitFor();
    await page.getByLabel('Launcher text').fill('Ask us');
    await page.getByLabel('Primary color', { exact: true }).fill('#0f766e');
    await page.getByLabel('Position').selectOption('bottom-left');
    await page.getByLabel('Starter questions').fill('Where is my order?\nHow do I return an item?');
    // Bottom left: the launcher now sits at the left edge of the preview.
    const frameBox = (await page.locator('iframe[title="Live preview of the widget"]').boundingBox())!;
    await expect.poll(async () => (await preview.locator('answerdesk-widget .launcher').boundingBox())!.x - frameBox.x < 100).toBe(true);
    // While the panel is open the launcher reads "Close"; closed, it shows the new launcher text.
    await expect.poll(() => preview.locator('answerdesk-widget .fab-text').textContent()).toBe('Close');
    await preview.locator('answerdesk-widget .launcher').click();
    await expect.poll(() => preview.locator('answerdesk-widget .fab-text').textContent()).toBe('Ask us');
    // Unsaved so far.
    expect((await getProject(project.id)).json().project.settings.widget).toBeUndefined();
    await page.getByRole('button', { name: 'Save widget' }).click();
    await page.getByText('Saved: visitors see the new look').waitFor();
    expect((await getProject(project.id)).json().project.settings.widget).toMatchObject({ fabText: 'Ask us', primaryColor: '#0f766e', position: 'bottom-left', starterQuestions: ['Where is my order?', 'How do I return an item?'] });
    const config = await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(created.publicKey) });
    expect(config.json()).toMatchObject({ fabText: 'Ask us', position: 'bottom-left' });

    // A new public key is shown once and fills the install snippet.
    await page.getByLabel('Key name').fill('Marketing site');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.locator('.notice pre code').first().textContent())!.trim();
    expect(shown).toMatch(/^ad_pk_\w{32}$/);
    expect(await page.locator('#install-title ~ pre').first().textContent()).toContain(`apiKey: '${shown}'`);
    expect((await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(shown) })).statusCode).toBe(200);
    // Revoking breaks every site using the key: the first press only asks, and Cancel keeps it.
    const keyRow = page.locator('tr', { has: page.locator('code', { hasText: shown.slice(0, 10) }) });
    await keyRow.getByRole('button', { name: `Revoke ${shown.slice(0, 10)}`, exact: false }).click();
    await keyRow.getByRole('button', { name: /^Yes, revoke ad_pk_/ }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await keyRow.getByRole('button', { name: 'Cancel' }).click();
    await keyRow.getByRole('button', { name: `Revoke ${shown.slice(0, 10)}`, exact: false }).click();
    expect((await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(shown) })).statusCode).toBe(200);
    await keyRow.getByRole('button', { name: /^Yes, revoke ad_pk_/ }).click();
    await expect.poll(async () => (await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(shown) })).statusCode).toBe(401);
    await keyRow.getByText('Revoked').waitFor();
    // The dead key is no longer offered to copy: the snippet falls back to the project's live public key.
    const install = page.locator('#install-title ~ pre').first();
    await expect.poll(() => install.textContent()).not.toContain(shown);
    expect(await install.textContent()).toContain('(your full public key)');
    expect(await page.locator('body').textContent()).not.toContain(shown);

    // Rotating the HMAC secret shows the new one once; signatures made with it verify.
    await page.getByRole('button', { name: 'Rotate HMAC secret' }).click();
    await page.getByRole('button', { name: 'Yes, rotate the HMAC secret' }).click();
    const secret = (await page.locator('#hmac-title ~ .notice pre code').textContent())!.trim();
    expect(secret).toMatch(/^ad_hs_/);
    const hmac = createHmac('sha256', secret).update('customer-1').digest('hex');
    const verified = await stack.t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(created.publicKey), payload: { userId: 'customer-1', hmac } });
    expect(verified.json()).toEqual({ verified: true });
    await expectAccessible(page, 'widget');
    await screenshot(page, `widget-${dialect.name}`);
  });

  it('Widget: a starter question typed on a new line between two others is saved as its own question', async () => {
    const { project } = await createProject(stack.t, {}, 'Starter shop');
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/widget`);
    const box = page.getByLabel('Starter questions');
    await box.click();
    await page.keyboard.type('Where is my order?');
    await page.keyboard.press('Enter');
    await page.keyboard.type('How do I return an item?');
    // Back to the end of the first line, a new line, a question in between: as anyone edits a list.
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Do you ship abroad?');
    expect(await box.inputValue()).toBe('Where is my order?\nDo you ship abroad?\nHow do I return an item?');
    // Blank lines and spaces around a question are left out when saving.
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('   ');
    await page.getByRole('button', { name: 'Save widget' }).click();
    await page.getByText('Saved: visitors see the new look').waitFor();
    expect((await getProject(project.id)).json().project.settings.widget.starterQuestions).toEqual(['Where is my order?', 'Do you ship abroad?', 'How do I return an item?']);
  });

  it('the project switcher starts the page afresh: a draft or a "Saved." of one project never shows in the other', async () => {
    const first = (await createProject(stack.t, {}, 'First switch shop')).project;
    const second = (await createProject(stack.t, {}, 'Second switch shop')).project;
    const page = await ownerPage();
    const switcher = page.getByRole('banner').getByRole('combobox');

    await page.goto(`${stack.origin}/dashboard/p/${first.id}/settings`);
    await page.getByLabel('Instructions').fill('Be brief.');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    await switcher.selectOption(second.id);
    await expect.poll(() => page.getByLabel('Project name', { exact: true }).inputValue()).toBe('Second switch shop');
    expect(await page.getByText('Saved.').count()).toBe(0);

    // An FAQ typed for the first project is not offered for adding to the second.
    await page.goto(`${stack.origin}/dashboard/p/${first.id}/knowledge`);
    await page.getByLabel('FAQ').check();
    await page.getByLabel('Question 1').fill('Do you gift wrap?');
    await page.getByLabel('Answer 1').fill('Yes, for 3 euros.');
    await switcher.selectOption(second.id);
    await page.waitForURL(`**/p/${second.id}/knowledge`);
    await page.getByRole('heading', { name: 'Add a source' }).waitFor();
    await page.getByLabel('FAQ').check();
    expect(await page.getByLabel('Question 1').inputValue()).toBe('');
    expect(await page.getByLabel('Answer 1').inputValue()).toBe('');
  });

  it('Analytics: shows the figures of GET …/analytics, and changes with the period', async () => {
    const p = await createProject(stack.t, {}, 'Analytics shop');
    const db = stack.t.deps.store.db;
    for (const user of ['ann', 'bob', null]) {
      const res = await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: user ? { endUserExternalId: user } : undefined });
      const conv = { id: res.json().conversationId as string, project_id: p.project.id };
      await appendMessage(db, conv, { role: 'user', content: `Question from ${user ?? 'someone'}`, status: 'complete' });
      const answer = await appendMessage(db, conv, { role: 'assistant', content: 'An answer', status: 'complete' });
      if (user === 'ann') {
        await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(p.publicKey), payload: { conversationId: conv.id, messageId: answer.id, rating: 'POSITIVE' } });
      }
    }
    const api = (days: number) =>
      stack.t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics?days=${days}`, headers: adminAuth() }).then((r) => r.json() as Analytics);
    const expected = await api(30);
    expect(expected.conversations.total).toBe(3);
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/analytics`);
    const stat = (name: string) => page.locator(`[data-stat="${name}"]`).textContent();
    await expect.poll(() => stat('conversations')).toBe(String(expected.conversations.total));
    expect(await stat('messages')).toBe(String(expected.messages.total));
    expect(await stat('positive')).toBe(String(expected.feedback.positive));
    expect(await stat('negative')).toBe(String(expected.feedback.negative));
    expect(await stat('declined')).toBe(String(expected.outcomes.declined));
    expect(await stat('answered')).toBe(String(expected.outcomes.answered + expected.outcomes.action));
    expect(await stat('satisfaction')).toBe('100 %');
    // The charts' tables carry the same series as the endpoint.
    const hours = page.locator('figure', { has: page.getByRole('img', { name: 'Visitor messages by hour of the day' }) });
    await hours.locator('canvas').first().waitFor();
    const hourCells = await hours.locator('tbody tr td').allTextContents();
    expect(hourCells.map(Number)).toEqual(expected.byHour.map((h) => h.messages));
    const perDay = page.locator('figure', { has: page.getByRole('img', { name: 'Conversations and messages per day' }) });
    const today = expected.byDay.at(-1)!;
    const lastRow = await perDay.locator('tbody tr').last().locator('td').allTextContents();
    expect(lastRow).toEqual([String(today.conversations), String(today.messages)]);
    expect(await perDay.locator('tbody tr').count()).toBe(30);

    await page.getByLabel('Period').selectOption('7');
    await expect.poll(() => perDay.locator('tbody tr').count()).toBe(7);
    await expectAccessible(page, 'analytics');
    await screenshot(page, `analytics-${dialect.name}`);
  });

  it('Users: an owner invites, the invited person joins by the link, gets another role, and is removed (their session ends)', async () => {
    const { project } = await createProject(stack.t, {}, 'Team shop');
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/users`);
    const invite = page.locator('form', { has: page.getByRole('heading', { name: 'Invite someone' }) });
    const email = `invited-${Date.now()}@example.com`;
    await invite.getByLabel('Email').fill(email);
    await invite.getByLabel('Project', { exact: true }).selectOption(project.id);
    await invite.getByLabel('Project role').selectOption('viewer');
    await invite.getByRole('button', { name: 'Create invite link' }).click();
    const link = (await page.locator('[data-invite-link]').textContent())!;
    expect(link).toMatch(new RegExp(`^${stack.origin}/dashboard/invite\\?token=`));
    await expectAccessible(page, 'users');
    await screenshot(page, `users-${dialect.name}`);

    const theirs = await newContext(browser, 360);
    const them = await theirs.newPage();
    await them.goto(link);
    await them.getByText(`You were invited as ${email}`).waitFor();
    await expectAccessible(them, 'invite');
    await them.getByLabel('Name').fill('Ivy Invited');
    await them.getByLabel('Password').fill('a fine long password');
    await them.getByRole('button', { name: 'Create my account' }).click();
    await them.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await them.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).count()).toBe(0);
    await screenshot(them, `invited-360-${dialect.name}`);

    await page.reload();
    const row = page.locator(`li[data-user-email="${email}"]`);
    await row.getByLabel('Ivy Invited on Team shop').selectOption('agent');
    await expect
      .poll(async () => (await listUsers(stack.t.deps.store.db)).find((u) => u.email === email)?.memberships.find((m) => m.projectId === project.id)?.role)
      .toBe('agent');
    await row.getByRole('button', { name: 'Remove Ivy Invited' }).click();
    await row.getByRole('button', { name: 'Yes, remove Ivy Invited' }).click();
    await expect.poll(async () => (await listUsers(stack.t.deps.store.db)).some((u) => u.email === email)).toBe(false);
    // Their session ended with the account: the next page they open asks them to sign in.
    await them.goto(`${stack.origin}/dashboard/p/${project.id}/analytics`);
    await them.getByRole('button', { name: 'Sign in' }).waitFor();
    await theirs.close();
  });

  it('Users: Revoke on an open invite is disabled while its request is under way, so a second press sends nothing', async () => {
    const email = `twice-${Date.now()}@example.com`;
    expect((await stack.t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers: adminAuth(), payload: { email, role: 'owner' } })).statusCode).toBe(201);
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/users`);
    // The revoke is held on its way, as on a slow connection.
    const deletes: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/admin/invites/*', async (route) => {
      if (route.request().method() !== 'DELETE') return route.continue();
      deletes.push(route.request().url());
      await held;
      await route.continue();
    });
    const revoke = page.getByRole('button', { name: `Revoke the invite of ${email}` });
    await revoke.click();
    await expect.poll(() => deletes.length).toBe(1);
    // The request can leave before React draws the pending state; the button is disabled while it is held.
    await expect.poll(() => revoke.isDisabled()).toBe(true);
    await revoke.click({ force: true });
    release();
    await revoke.waitFor({ state: 'detached' });
    expect(deletes).toHaveLength(1);
    expect(await page.getByRole('alert').count()).toBe(0);
    const open = (await stack.t.app.inject({ method: 'GET', url: '/api/v1/admin/invites', headers: adminAuth() })).json().invites as Array<{ email: string }>;
    expect(open.some((i) => i.email === email)).toBe(false);
  });

  it('Users and the invite page fit a phone with a long e-mail address and name', async () => {
    const { project } = await createProject(stack.t, {}, 'Long names shop');
    const owner = await seedUser(stack.t, { role: 'owner' });
    const phone = await newContext(browser, 360);
    const page = await phone.newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    await page.goto(`${stack.origin}/dashboard/users`);
    // Real addresses are this long; an address has no space for the line to break at.
    const email = `alexandra.konstantinopoulou.${Date.now()}@northwind-household-goods.example.com`;
    const invite = page.locator('form', { has: page.getByRole('heading', { name: 'Invite someone' }) });
    await invite.getByLabel('Email').fill(email);
    await invite.getByLabel('Project', { exact: true }).selectOption(project.id);
    await invite.getByRole('button', { name: 'Create invite link' }).click();
    const link = (await page.locator('[data-invite-link]').textContent())!;
    await page.getByRole('heading', { name: 'Open invites' }).waitFor();
    await expectNoSidewaysScroll(page, 'Users with an open invite');

    const them = await phone.browser()!.newContext({ viewport: { width: 360, height: 780 } });
    const invited = await them.newPage();
    await invited.goto(link);
    await invited.getByText(`You were invited as ${email}`).waitFor();
    await expectNoSidewaysScroll(invited, 'the invite page');
    await invited.getByLabel('Name').fill('Alexandra Konstantinopoulou-Vasilakopoulou');
    await invited.getByLabel('Password').fill('a fine long password');
    await invited.getByRole('button', { name: 'Create my account' }).click();
    await invited.getByRole('button', { name: 'Sign out' }).waitFor();
    await expectNoSidewaysScroll(invited, 'their first page');
    await them.close();

    await page.reload();
    await page.locator(`li[data-user-email="${email}"]`).waitFor();
    await expectNoSidewaysScroll(page, 'Users listing them');
    await phone.close();
  });

  it('every page: reachable from the navigation, no serious axe violation, fits 360 px; screenshots', async () => {
    const { project } = await createProject(stack.t, {}, 'Tour shop');
    const page = await ownerPage();
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/conversations`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of [...PAGES, 'Users']) {
      await nav.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
      expect(await nav.getByRole('link', { name, exact: true }).getAttribute('aria-current')).toBe('page');
      await settled(page);
      await expectAccessible(page, name);
      await screenshot(page, `page-${name.toLowerCase()}-${dialect.name}`);
    }
    const phone = await newContext(browser, 360);
    const small = await phone.newPage();
    const owner = await seedUser(stack.t, { role: 'owner' });
    await signIn(small, stack.origin, owner.email, owner.password);
    for (const name of [...PAGES, 'Users']) {
      await small.goto(name === 'Users' ? `${stack.origin}/dashboard/users` : `${stack.origin}/dashboard/p/${project.id}/${name.toLowerCase()}`);
      await small.getByRole('heading', { level: 1, name, exact: true }).waitFor();
      await settled(small);
      expect(await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), `${name} at 360 px`).toBeLessThanOrEqual(0);
      await expectAccessible(small, `${name} at 360 px`);
      if (['Widget', 'Analytics', 'Settings'].includes(name)) await screenshot(small, `page-${name.toLowerCase()}-360-${dialect.name}`);
    }
    await phone.close();
  }, 120_000);
});

/** Waits until the page shows no loading indicator (the Activity page polls forever, so never network-idle). */
async function settled(page: Page): Promise<void> {
  await page.getByRole('status').filter({ hasText: 'Loading' }).first().waitFor({ state: 'detached' }).catch(() => {});
  await page.waitForTimeout(300);
}
