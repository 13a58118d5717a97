import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../fakes/action-endpoint.js';
import { createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, expectNoSidewaysScroll, seedUser } from './project-pages.js';

interface StoredAction {
  id: string;
  name: string;
  description: string;
  url: string;
  enabled: boolean;
  headers: Record<string, { value: string; secret: boolean }>;
  parameters: Record<string, unknown>;
}

const SECRET = 'Bearer sk_live_dashboard_9f8e7d';

/**
 * The Actions page in chromium against the real server and a real endpoint: the form and its
 * JSON-Schema editor, errors in place, write-only secret headers, Test with the real request and
 * response, the call log, enable/disable and role limits.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Actions page ($name)', (dialect) => {
  let stack: DashboardStack;
  let endpoint: ActionEndpoint;
  let browser: Browser;

  beforeAll(async () => {
    endpoint = await startActionEndpoint();
    stack = await startDashboard(dialect, { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await endpoint?.close();
  });

  const actions = async (projectId: string) => (await adminApi<{ actions: StoredAction[] }>(stack.t, 'GET', `/projects/${projectId}/actions`)).body.actions;

  it('creates an action with a checked JSON Schema and a secret header, tests it, edits it and reads the call log', async () => {
    const { project } = await createProject(stack.t, {}, 'Actions shop');
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.getByRole('link', { name: 'Actions' }).click();
    await page.getByRole('heading', { name: 'Actions', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New action' }).click();

    const form = page.getByRole('form', { name: 'New action' });
    await form.getByLabel('Name', { exact: true }).fill('track_order');
    await form.getByLabel('Description', { exact: true }).fill('Look up where an order is and when it arrives.');
    await form.getByLabel('URL').fill(`${endpoint.base}/orders/{orderNumber}`);
    const params = form.getByLabel('Parameters (JSON Schema)');

    // Live validation: broken JSON is named with its line and column, and cannot be saved
    await params.fill('{\n  "type": "object",\n  "properties": {\n    "orderNumber": { "type": "string" }\n  \n}');
    await form.getByText(/Invalid JSON at line \d+, column \d+/).waitFor();
    expect(await form.getByRole('button', { name: 'Create action' }).isDisabled()).toBe(true);
    // Valid JSON, but a keyword typo the server's strict JSON Schema compiler refuses: shown at the field, nothing lost
    const typo = '{\n  "type": "object",\n  "properties": {\n    "orderNumber": { "type": "string", "pattern": "^A-\\\\d{4}$" }\n  },\n  "requird": ["orderNumber"]\n}';
    await params.fill(typo);
    await form.getByText('Valid JSON').waitFor();
    await form.getByRole('button', { name: 'Add a header' }).click();
    await form.getByLabel('Header 1 name').fill('Authorization');
    await form.getByLabel('Header 1 value').fill(SECRET);
    expect(await form.getByLabel('Header 1 value').getAttribute('type')).toBe('password');
    await form.getByRole('button', { name: 'Create action' }).click();
    await expect.poll(() => params.getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('.field', { has: page.getByLabel('Parameters (JSON Schema)') }).locator('.field-error').textContent()).toMatch(/requird|placeholder|required/i);
    expect(await params.inputValue()).toBe(typo);
    expect(await form.getByLabel('Name', { exact: true }).inputValue()).toBe('track_order');
    expect(await form.getByLabel('Header 1 value').inputValue()).toBe(SECRET);
    expect(await actions(project.id)).toEqual([]);

    await params.fill('{\n  "type": "object",\n  "properties": {\n    "orderNumber": { "type": "string", "pattern": "^A-\\\\d{4}$" }\n  },\n  "required": ["orderNumber"]\n}');
    await form.getByRole('button', { name: 'Create action' }).click();
    await page.getByText('Created “track_order”').waitFor();

    // Stored, with the secret write-only: never shown back, not in the page at all
    const [stored] = await actions(project.id);
    expect(stored).toMatchObject({ name: 'track_order', enabled: true, headers: { Authorization: { value: '********', secret: true } } });
    expect(stored.parameters).toMatchObject({ required: ['orderNumber'] });
    const edit = page.getByRole('form', { name: 'Edit track_order' });
    expect(await edit.getByLabel('Header 1 value').inputValue()).toBe('');
    expect(await edit.getByLabel('Header 1 value').getAttribute('placeholder')).toMatch(/Stored secret/);
    expect(await page.content()).not.toContain('sk_live_dashboard');

    // Test: the real request and response, the secret masked, the endpoint receiving the real one
    const args = page.getByLabel('Arguments (JSON)');
    await args.fill('{"orderNumber": "A-1234"}');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    const sent = page.getByLabel('Request sent');
    await sent.waitFor();
    expect(await sent.textContent()).toContain(`GET ${endpoint.base}/orders/A-1234`);
    expect(await sent.textContent()).toMatch(/authorization: \*{8}/);
    expect(await page.getByLabel('Response received').textContent()).toMatch(/HTTP 200[\s\S]*"status": "shipped"/);
    expect(endpoint.receivedAt('/orders/A-1234').at(-1)?.headers.authorization).toBe(SECRET);
    expect(await page.content()).not.toContain('sk_live_dashboard');

    // Invalid arguments never reach the endpoint; the reason is shown
    const before = endpoint.received.length;
    await args.fill('{"orderNumber": "nope"}');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByRole('region', { name: 'Test result' }).getByText(/Invalid arguments|must match pattern/).first().waitFor();
    expect(endpoint.received.length).toBe(before);

    // The call log lists both runs, newest first
    const log = page.getByRole('table', { name: 'Calls of track_order' });
    await expect.poll(() => log.locator('tbody tr').count()).toBe(2);
    expect(await log.locator('tbody tr').nth(0).textContent()).toMatch(/test.*error/);
    expect(await log.locator('tbody tr').nth(1).textContent()).toMatch(/test.*ok.*200/);

    // Edit keeps the stored secret when its field stays empty
    await edit.getByLabel('Description', { exact: true }).fill('Find an order: status, carrier, arrival date.');
    await edit.getByRole('button', { name: 'Save action' }).click();
    await page.getByText('Saved “track_order”').waitFor();
    expect((await actions(project.id))[0].description).toBe('Find an order: status, carrier, arrival date.');
    await args.fill('{"orderNumber": "A-7777"}');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await expect.poll(() => page.getByLabel('Request sent').textContent()).toContain('/orders/A-7777');
    expect(endpoint.receivedAt('/orders/A-7777').at(-1)?.headers.authorization).toBe(SECRET);

    await expectAccessible(page, 'Actions');
    await screenshot(page, `actions-${dialect.name}`);

    // Disable from the list
    await page.getByRole('checkbox', { name: 'Enable track_order' }).uncheck();
    await expect.poll(async () => (await actions(project.id))[0].enabled).toBe(false);
    // The editor still open: its box follows the switch, and a save there keeps the action off.
    await expect.poll(() => edit.getByLabel('Enabled (offered to the agent)').isChecked()).toBe(false);
    await edit.getByLabel('Description', { exact: true }).fill('Find an order.');
    await edit.getByRole('button', { name: 'Save action' }).click();
    await expect.poll(async () => (await actions(project.id))[0].description).toBe('Find an order.');
    expect((await actions(project.id))[0].enabled).toBe(false);
    await context.close();
  }, 120_000);

  it('is read-only for a viewer (and the server refuses), and usable at 360 px', async () => {
    const { project } = await createProject(stack.t, {}, 'Viewer actions');
    const created = await adminApi<{ action: StoredAction }>(stack.t, 'POST', `/projects/${project.id}/actions`, {
      name: 'resend_invoice',
      description: 'Resend an invoice by e-mail.',
      method: 'POST',
      url: `${endpoint.base}/echo`,
      headers: { 'X-Api-Key': 'key_live_hidden_123' },
    });
    expect(created.status).toBe(201);
    const viewer = await seedUser(stack.t, { projectId: project.id, role: 'viewer' });
    const context = await newContext(browser, 360);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/actions`);
    await page.getByRole('button', { name: 'Open resend_invoice' }).click();
    const form = page.getByRole('form', { name: 'Edit resend_invoice' });
    await form.waitFor();
    expect(await form.getByRole('button', { name: 'Save action' }).isDisabled()).toBe(true);
    expect(await form.getByLabel('Description', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Test', exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'New action' }).isDisabled()).toBe(true);
    expect(await page.content()).not.toContain('key_live_hidden');

    const refused = await callFromPage(page, 'PATCH', `/api/v1/admin/projects/${project.id}/actions/${created.body.action.id}`, { enabled: false });
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await actions(project.id))[0].enabled).toBe(true);

    await expectNoSidewaysScroll(page, 'Actions');
    await expectAccessible(page, 'Actions (viewer, 360 px)');
    await screenshot(page, `actions-viewer-360-${dialect.name}`);
    await context.close();
  }, 120_000);
});
