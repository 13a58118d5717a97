import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, expectNoSidewaysScroll, seedUser } from './project-pages.js';

interface StoredSkill {
  id: string;
  name: string;
  description: string;
  instructions: string;
  enabled: boolean;
}

/** The Skills page in chromium against the real server: create, errors in place, edit, enable/disable, role limits. */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Skills page ($name)', (dialect) => {
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

  const skills = async (projectId: string) => (await adminApi<{ skills: StoredSkill[] }>(stack.t, 'GET', `/projects/${projectId}/skills`)).body.skills;
  const offered = async (publicKey: string) =>
    ((await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(publicKey) })).json() as { availableSkills: Array<{ name: string }> }).availableSkills.map((s) => s.name);

  it('creates, edits, disables and deletes a skill; the widget offers exactly the enabled ones', async () => {
    const { project, publicKey } = await createProject(stack.t, {}, 'Skills shop');
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New skill' }).click();
    // The editor takes the focus so keyboard users land in it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('New skill');

    // A refused save: the reason next to the field, everything typed still there
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('Description').fill('Find where a parcel is.');
    await page.getByLabel('Instructions').fill('Ask for the order number, then call track_order.');
    await page.getByRole('button', { name: 'Create skill' }).click();
    await expect.poll(() => page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Instructions').inputValue()).toBe('Ask for the order number, then call track_order.');
    expect(await skills(project.id)).toEqual([]);

    await page.getByLabel('Name').fill('Track an order');
    await page.getByRole('button', { name: 'Create skill' }).click();
    await page.getByText('Saved “Track an order”').waitFor();
    expect(await skills(project.id)).toMatchObject([
      { name: 'Track an order', description: 'Find where a parcel is.', instructions: 'Ask for the order number, then call track_order.', enabled: true },
    ]);
    expect(await offered(publicKey)).toEqual(['Track an order']);

    // Edit
    await page.getByLabel('Description').fill('Where is my parcel, and when does it arrive?');
    await page.getByRole('button', { name: 'Save skill' }).click();
    await page.getByText('Saved “Track an order”').waitFor();
    expect((await skills(project.id))[0].description).toBe('Where is my parcel, and when does it arrive?');

    // A second skill created with the keyboard only
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'New skill' }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Return an item');
    await page.keyboard.press('Enter');
    await page.getByText('Saved “Return an item”').waitFor();
    expect(await offered(publicKey)).toEqual(['Track an order', 'Return an item']);

    // Disable from the list: the widget stops offering it
    await page.getByRole('checkbox', { name: 'Enable Track an order' }).uncheck();
    await expect.poll(() => offered(publicKey)).toEqual(['Return an item']);
    expect((await skills(project.id)).find((s) => s.name === 'Track an order')?.enabled).toBe(false);

    // The editor open while the list's switch turns the skill off: its box follows, and a save of
    // the description leaves the skill off (it used to send the box's old value and turn it back on).
    await page.getByRole('button', { name: 'Edit Return an item' }).click();
    await page.getByRole('checkbox', { name: 'Enable Return an item' }).uncheck();
    await expect.poll(() => offered(publicKey)).toEqual([]);
    await expect.poll(() => page.getByLabel('Enabled', { exact: true }).isChecked()).toBe(false);
    await page.getByLabel('Description').fill('Send something back.');
    await page.getByRole('button', { name: 'Save skill' }).click();
    await page.getByText('Saved “Return an item”').waitFor();
    expect((await skills(project.id)).find((s) => s.name === 'Return an item')).toMatchObject({ description: 'Send something back.', enabled: false });
    expect(await offered(publicKey)).toEqual([]);

    await expectAccessible(page, 'Skills');
    await screenshot(page, `skills-${dialect.name}`);

    await page.locator('tr', { hasText: 'Return an item' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete Return an item' }).click();
    await page.locator('tr', { hasText: 'Return an item' }).waitFor({ state: 'detached' });
    expect((await skills(project.id)).map((s) => s.name)).toEqual(['Track an order']);
    await context.close();
  }, 120_000);

  it('is read-only for a viewer (and the server refuses), and usable at 360 px', async () => {
    const { project } = await createProject(stack.t, {}, 'Viewer skills');
    const created = await adminApi<{ skill: StoredSkill }>(stack.t, 'POST', `/projects/${project.id}/skills`, { name: 'Book a call', instructions: 'Offer three slots.' });
    const viewer = await seedUser(stack.t, { projectId: project.id, role: 'viewer' });
    const context = await newContext(browser, 360);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/skills`);
    await page.getByRole('button', { name: 'View Book a call' }).click();
    expect(await page.getByRole('button', { name: 'Save skill' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Instructions').inputValue()).toBe('Offer three slots.');
    expect(await page.getByRole('checkbox', { name: 'Enable Book a call' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'New skill' }).isDisabled()).toBe(true);
    const refused = await callFromPage(page, 'PATCH', `/api/v1/admin/projects/${project.id}/skills/${created.body.skill.id}`, { enabled: false });
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await skills(project.id))[0].enabled).toBe(true);
    await expectNoSidewaysScroll(page, 'Skills');
    await expectAccessible(page, 'Skills (viewer, 360 px)');
    await screenshot(page, `skills-viewer-360-${dialect.name}`);
    await context.close();
  }, 120_000);
});
