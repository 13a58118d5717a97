import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueSetupToken } from '../../src/accounts/setup.js';
import { listUsers } from '../../src/accounts/users.js';
import { adminAuth, createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, seedUser, signIn, startDashboard, type DashboardStack } from './browser.js';

const PAGE_LINKS = ['Conversations', 'Knowledge', 'Actions', 'Skills', 'Widget', 'Analytics', 'Activity', 'Settings'];

/** Accounts as people meet them in the dashboard: first run, sign-in, roles, and the CSRF guard. */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard accounts in chromium ($name)', (dialect) => {
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

  it('first run: the printed setup link creates the owner, who is signed in at once; the link works only once', async () => {
    const token = await issueSetupToken(stack.t.deps.store.db);
    expect(token).toBeTruthy();
    const page = await context.newPage();
    await page.goto(`${stack.origin}/dashboard/setup?token=${token}`);
    await page.getByRole('heading', { name: 'Set up AnswerDesk' }).waitFor();
    await page.getByLabel('Email').fill('Founder@Example.com');
    await page.getByLabel('Name').fill('Fran Founder');
    // The hint says what the server requires (it once said 8 where the server wants 10).
    await page.getByText('At least 10 characters.').waitFor();
    await page.getByLabel('Password').fill('a long enough passphrase');
    await expectAccessible(page, 'setup');
    await screenshot(page, `setup-${dialect.name}`);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // No project yet: the owner is offered to create one.
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    const users = await listUsers(stack.t.deps.store.db);
    expect(users.map((u) => [u.email, u.name, u.role])).toEqual([['founder@example.com', 'Fran Founder', 'owner']]);

    const again = await context.browser()!.newContext();
    const second = await again.newPage();
    await second.goto(`${stack.origin}/dashboard/setup?token=${token}`);
    await second.getByText('Setup is done').waitFor();
    await again.close();
  });

  it('signs in with the labelled form, shows every page link, keeps what was typed on a wrong password, and signs out', async () => {
    const owner = await seedUser(stack.t, { role: 'owner' });
    await createProject(stack.t, {}, 'Sign-in shop');
    const page = await context.newPage();
    await page.goto(`${stack.origin}/dashboard/`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Invalid email or password');
    expect(await page.getByLabel('Email').inputValue()).toBe(owner.email);

    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.waitForURL(/\/dashboard\/p\/proj_\w+\/conversations$/);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of [...PAGE_LINKS, 'Users']) expect(await nav.getByRole('link', { name, exact: true }).count(), name).toBe(1);
    await expect(page.getByLabel('Project').count()).resolves.toBe(1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The session is gone on the server, not only in this tab.
    expect((await context.request.get(`${stack.origin}/api/v1/auth/me`)).status()).toBe(401);
  });

  it('limits roles: a viewer sees disabled saves and the server refuses them; an agent has no Users link', async () => {
    const { project } = await createProject(stack.t, {}, 'Roles shop');
    const viewer = await seedUser(stack.t, { role: 'member', memberships: [{ projectId: project.id, role: 'viewer' }] });
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/settings`);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByText('You have read-only access').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/widget`);
    await page.getByRole('heading', { name: 'Widget', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Save widget' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Create key' }).isDisabled()).toBe(true);
    // The same save, sent anyway from the page (same origin, with the cookie), is refused by the server.
    const refused = await page.evaluate(async (url) => {
      const res = await fetch(url, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Hijacked' }) });
      return { status: res.status, body: await res.json() };
    }, `/api/v1/admin/projects/${project.id}`);
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    const stored = await stack.t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${project.id}`, headers: adminAuth() });
    expect(stored.json().project.name).toBe('Roles shop');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).count()).toBe(0);
    await screenshot(page, `viewer-widget-${dialect.name}`);

    const agentContext = await newContext(browser);
    const agent = await seedUser(stack.t, { role: 'member', memberships: [{ projectId: project.id, role: 'agent' }] });
    const agentPage = await agentContext.newPage();
    await signIn(agentPage, stack.origin, agent.email, agent.password);
    const nav = agentPage.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Conversations' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Users' }).count()).toBe(0);
    await agentPage.goto(`${stack.origin}/dashboard/users`);
    await agentPage.getByText('Only owners manage users.').waitFor();
    await agentContext.close();
  });

  it('refuses a cross-site write made with the session cookie (CSRF) and stores nothing', async () => {
    const { project } = await createProject(stack.t, {}, 'CSRF shop');
    const owner = await seedUser(stack.t, { role: 'owner' });
    const page = await context.newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    const url = `${stack.origin}/api/v1/admin/projects/${project.id}/skills`;
    // What a form or fetch on another site sends along with the cookie.
    const crossSite = await context.request.post(url, { data: { name: 'Planted skill' }, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status()).toBe(403);
    expect(await crossSite.json()).toEqual({ error: 'Forbidden' });
    const skills = await stack.t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${project.id}/skills`, headers: adminAuth() });
    expect(skills.json().skills).toEqual([]);
    // The dashboard's own origin may write with the same cookie.
    const sameSite = await context.request.post(url, { data: { name: 'Real skill' }, headers: { origin: stack.origin, 'sec-fetch-site': 'same-origin' } });
    expect(sameSite.status()).toBe(201);
  });
});
