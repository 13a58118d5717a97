import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, dialects } from '../helper.js';
import { ask, hostPage, lastAnswer, openHostPage } from '../widget/harness.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, signIn, startDashboard, type DashboardStack } from './browser.js';
import { callFromPage, seedUser } from './project-pages.js';

interface HandoffSettings {
  enabled?: boolean;
  afterDeclined?: number | null;
  onNegativeFeedback?: boolean;
  officeHoursText?: string | null;
}

/**
 * The Settings page's handoff settings (`settings.handoff`, docs/handoff.md) in chromium against the
 * real server: what is saved is what the server stores, and the widget on a customer's page follows it.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Settings: handoff ($name)', (dialect) => {
  let stack: DashboardStack;
  let browser: Browser;
  // A customer's site on another origin, where the widget is installed.
  let host: Server;
  let hostOrigin: string;
  const pages = new Map<string, string>();

  beforeAll(async () => {
    stack = await startDashboard(dialect);
    browser = await launchBrowser();
    host = createServer((req, res) => {
      const html = pages.get((req.url ?? '/').slice(1));
      if (html) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      else res.writeHead(404).end('not found');
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (host ? host.close(() => resolve()) : resolve()));
    await browser?.close();
    await stack?.close();
  });

  const stored = async (projectId: string) =>
    (await stack.t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}`, headers: adminAuth() })).json().project.settings as { handoff?: HandoffSettings };

  /** The widget on a fresh visitor's page, its panel open. */
  async function widget(publicKey: string, name: string): Promise<Page> {
    pages.set(name, hostPage({ apiOrigin: stack.origin, apiKey: publicKey }));
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await openHostPage(context, `${hostOrigin}/${name}`);
    await page.locator('answerdesk-widget .launcher').click();
    await page.locator('answerdesk-widget textarea#ad-input').waitFor();
    return page;
  }

  it('an admin sets when a conversation goes to a person; the widget follows, and restoring the defaults removes them', async () => {
    const p = await createProject(stack.t, { model: 'builtin' }, 'Handoff settings shop');
    const admin = await seedUser(stack.t, { projectId: p.project.id, role: 'admin' });
    const page = await (await newContext(browser)).newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/settings`);

    // The defaults, as the server applies them.
    const enabled = page.getByLabel('Visitors and the assistant can ask for a person');
    const after = page.getByLabel('Hand off after this many declined answers in a row');
    const negative = page.getByLabel('Hand off when a visitor rates an answer as not helpful');
    const office = page.getByLabel('Office hours text');
    await enabled.waitFor();
    expect(await enabled.isChecked()).toBe(true);
    expect(await after.inputValue()).toBe('');
    expect(await negative.isChecked()).toBe(false);
    expect(await office.inputValue()).toBe('');

    // Out of bounds: the server's message on the field, nothing typed lost, nothing stored.
    await office.fill('We reply Mon–Fri, 9:00–17:00 CET.');
    await after.fill('25');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => after.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await after.getAttribute('aria-describedby'))!.split(' ');
    expect(await page.locator(`[id="${describedBy.at(-1)}"]`).textContent()).toMatch(/20/);
    expect(await page.locator(`[id="${describedBy[0]}"]`).textContent()).toContain('1 to 20');
    expect(await office.inputValue()).toBe('We reply Mon–Fri, 9:00–17:00 CET.');
    expect((await stored(p.project.id)).handoff).toBeUndefined();

    await after.fill('1');
    await negative.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await after.getAttribute('aria-invalid')).toBeNull();
    expect((await stored(p.project.id)).handoff).toEqual({ enabled: true, afterDeclined: 1, onNegativeFeedback: true, officeHoursText: 'We reply Mon–Fri, 9:00–17:00 CET.' });
    await expectAccessible(page, 'settings with handoff');

    // The widget offers a person, and a question the assistant declines hands the conversation over at once.
    const visitor = await widget(p.publicKey, `handoff-on-${dialect.name}`);
    await visitor.locator('answerdesk-widget button.ask-person', { hasText: 'Talk to a person' }).waitFor();
    await ask(visitor, 'Do you offer gift wrapping?');
    await lastAnswer(visitor);
    await visitor.locator('answerdesk-widget .handoff .note', { hasText: 'A person will reply here. We reply Mon–Fri, 9:00–17:00 CET.' }).waitFor();
    await visitor.context().close();

    // Turned off: no "Talk to a person", and the button's route refuses.
    await enabled.uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await stored(p.project.id)).handoff).toMatchObject({ enabled: false, afterDeclined: 1 });
    const off = await widget(p.publicKey, `handoff-off-${dialect.name}`);
    await ask(off, 'Hello there');
    await lastAnswer(off);
    expect(await off.locator('answerdesk-widget button.ask-person').count()).toBe(0);
    const conversationId = await off.evaluate(() => JSON.parse(Object.entries(localStorage).find(([k]) => k.includes('answerdesk'))![1]).conversationId as string);
    const refused = await stack.t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${conversationId}/handoff`, headers: auth(p.publicKey), payload: {} });
    expect(refused.statusCode).toBe(409);
    await off.context().close();

    // Restoring the defaults removes the stored handoff settings (sent as null), as emptying Model does.
    await page.getByRole('button', { name: 'Restore the handoff defaults' }).click();
    expect(await enabled.isChecked()).toBe(true);
    expect(await after.inputValue()).toBe('');
    expect(await negative.isChecked()).toBe(false);
    expect(await office.inputValue()).toBe('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await stored(p.project.id)).handoff).toBeUndefined();
    const config = await stack.t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
    expect(config.json().handoff).toMatchObject({ enabled: true });

    // Emptying one field removes that one setting only.
    await office.fill('Back on Monday.');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    await office.fill('');
    await negative.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await stored(p.project.id)).handoff).toEqual({ enabled: true, afterDeclined: null, onNegativeFeedback: true, officeHoursText: null });
    await page.reload();
    await expect.poll(() => negative.isChecked()).toBe(true);
    expect(await office.inputValue()).toBe('');
    await page.context().close();
  });

  it('an agent reads the handoff settings without being able to change them, and the server refuses them too', async () => {
    const p = await createProject(stack.t, { handoff: { enabled: false, afterDeclined: 3, officeHoursText: 'Weekdays only.' } }, 'Handoff read-only shop');
    const agent = await seedUser(stack.t, { projectId: p.project.id, role: 'agent' });
    const page = await (await newContext(browser)).newPage();
    await signIn(page, stack.origin, agent.email, agent.password);
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/settings`);
    const enabled = page.getByLabel('Visitors and the assistant can ask for a person');
    await enabled.waitFor();
    expect(await enabled.isChecked()).toBe(false);
    expect(await enabled.isDisabled()).toBe(true);
    expect(await page.getByLabel('Hand off when a visitor rates an answer as not helpful').isDisabled()).toBe(true);
    expect(await page.getByLabel('Hand off after this many declined answers in a row').inputValue()).toBe('3');
    expect(await page.getByLabel('Hand off after this many declined answers in a row').isEditable()).toBe(false);
    expect(await page.getByLabel('Office hours text').inputValue()).toBe('Weekdays only.');
    expect(await page.getByLabel('Office hours text').isEditable()).toBe(false);
    expect(await page.getByRole('button', { name: 'Restore the handoff defaults' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true);
    const refused = await callFromPage(page, 'PATCH', `/api/v1/admin/projects/${p.project.id}`, { settings: { handoff: { enabled: true } } });
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await stored(p.project.id)).handoff).toEqual({ enabled: false, afterDeclined: 3, officeHoursText: 'Weekdays only.' });
    await page.context().close();
  });
});
