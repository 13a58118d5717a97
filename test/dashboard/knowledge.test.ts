import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import { createProject, dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, eventually, expectNoSidewaysScroll, seedUser } from './project-pages.js';

interface Source {
  id: string;
  type: string;
  title: string | null;
  status: string;
  syncedAt: string | null;
  chunkCount: number;
}

/**
 * The Knowledge page in chromium against the real server and a real ingestion worker: every way to
 * add a source, live status, re-sync, delete, the search preview, errors in place, and role limits.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Knowledge page ($name)', (dialect) => {
  let stack: DashboardStack;
  let worker: KnowledgeWorker;
  let browser: Browser;
  let site: Server;
  let siteOrigin: string;
  let siteVersion = 1;

  beforeAll(async () => {
    // A small help site on this machine for the URL source (private addresses allowed for it).
    site = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><html><head><title>Delivery help</title></head><body><main><h1>Delivery</h1><p>Version ${siteVersion}: parcels ship within two working days from our warehouse.</p></main></body></html>`,
      );
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    stack = await startDashboard(dialect, { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await stack?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  });

  const sources = async (projectId: string) => (await adminApi<{ sources: Source[] }>(stack.t, 'GET', `/projects/${projectId}/knowledge`)).body.sources;

  /** What the search preview shows once it is done searching: its passages, or that nothing was found. */
  const previewShows = (page: Page) => async () => {
    const preview = page.getByRole('region', { name: 'Search preview' });
    if ((await preview.getByText('Searching…').count()) > 0) return 'searching';
    const hits = preview.getByRole('list', { name: /Passages found/ });
    if ((await hits.count()) > 0) return (await hits.textContent()) ?? '';
    return (await preview.getByText(/^Nothing found for/).count()) > 0 ? 'nothing found' : 'nothing asked';
  };

  it('adds Markdown, FAQ and URL sources, shows them become ready, re-syncs, searches and deletes', async () => {
    const { project } = await createProject(stack.t, {}, 'Knowledge shop');
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
    await expect.poll(() => page.url()).toContain(`/dashboard/p/${project.id}/knowledge`);

    // Markdown
    await page.getByRole('radio', { name: 'Markdown' }).check();
    await page.getByLabel('Title (optional)').fill('Returns policy');
    await page.getByRole('textbox', { name: 'Markdown' }).fill('# Returns\n\nYou can return any item within 30 days for a full refund.\n\n## Damaged items\n\nSend us a photo and we replace it.');
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByText('Added “Returns policy”').waitFor();
    const row = page.locator('tr', { hasText: 'Returns policy' });
    await row.locator('[data-status="ready"]').waitFor({ timeout: 20_000 });

    // A question nothing answers yet stays in the search preview while the FAQ below is added.
    const shown = previewShows(page);
    await page.getByLabel('Question').fill('Do you ship abroad?');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(shown).toBe('nothing found');

    // FAQ with two pairs
    await page.getByRole('radio', { name: 'FAQ' }).check();
    await page.getByLabel('Question 1').fill('Do you ship abroad?');
    await page.getByLabel('Answer 1').fill('Yes, we ship to every country in the European Union.');
    await page.getByRole('button', { name: 'Add a question' }).click();
    await page.getByLabel('Question 2').fill('How much is shipping?');
    await page.getByLabel('Answer 2').fill('Shipping is free above 50 euros.');
    await page.getByLabel('Title (optional)').fill('Shipping FAQ');
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.locator('tr', { hasText: 'Shipping FAQ' }).locator('[data-status="ready"]').waitFor({ timeout: 20_000 });
    // Once indexed, the preview searches again: the new passage is found without asking again.
    await expect.poll(shown).toContain('every country in the European Union');

    // URL: a refused one first keeps what was typed, with the reason next to the field
    await page.getByRole('radio', { name: 'URL' }).check();
    await page.getByLabel('Page URL').fill('ftp://example.com/help');
    await page.getByRole('button', { name: 'Add source' }).click();
    const urlField = page.getByLabel('Page URL');
    await expect.poll(() => urlField.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field', { has: urlField }).locator('.field-error').textContent()).toMatch(/http/);
    expect(await urlField.inputValue()).toBe('ftp://example.com/help');
    await urlField.fill(`${siteOrigin}/delivery`);
    await page.getByRole('button', { name: 'Add source' }).click();
    const urlRow = page.locator('tr', { hasText: 'Delivery help' });
    await urlRow.locator('[data-status="ready"]').waitFor({ timeout: 20_000 });

    const stored = await sources(project.id);
    expect(stored.map((s) => [s.type, s.title, s.status]).sort()).toEqual([
      ['faq', 'Shipping FAQ', 'ready'],
      ['markdown', 'Returns policy', 'ready'],
      ['url', 'Delivery help', 'ready'],
    ]);
    const urlSource = stored.find((s) => s.type === 'url')!;

    // Re-sync reads the page again: the new version becomes searchable, and the preview shows it
    await page.getByLabel('Question').fill('parcels warehouse');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(shown).toContain('Version 1');
    siteVersion = 2;
    await urlRow.getByRole('button', { name: /Re-sync/ }).click();
    await eventually(async () => {
      const s = (await sources(project.id)).find((x) => x.id === urlSource.id);
      return s && s.status === 'ready' && s.syncedAt !== urlSource.syncedAt ? s : undefined;
    }, 're-sync');
    await urlRow.locator('[data-status="ready"]').waitFor();
    await expect.poll(shown).toContain('Version 2');
    expect(await shown()).not.toContain('Version 1');

    // Search preview: what the agent would retrieve, with scores and chunk text
    await page.getByLabel('Question').fill('Can I get a full refund?');
    await page.getByRole('button', { name: 'Search' }).click();
    const hits = page.getByRole('list', { name: /Passages found/ });
    await hits.waitFor();
    await expect.poll(() => hits.locator('li').first().textContent()).toContain('within 30 days for a full refund');
    expect(await hits.locator('li').first().locator('.badge').textContent()).toMatch(/^score \d+\.\d{3}$/);
    await expectAccessible(page, 'Knowledge');
    await screenshot(page, `knowledge-${dialect.name}`);

    // Delete asks once more, then the source is gone from the page, the store and the preview
    await page.getByLabel('Question').fill('Do you ship abroad?');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(shown).toContain('every country in the European Union');
    await page.locator('tr', { hasText: 'Shipping FAQ' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete Shipping FAQ' }).click();
    await page.locator('tr', { hasText: 'Shipping FAQ' }).waitFor({ state: 'detached' });
    expect((await sources(project.id)).map((s) => s.title).sort()).toEqual(['Delivery help', 'Returns policy']);
    await expect.poll(shown).not.toMatch(/searching|European Union/);
    expect(await page.getByLabel('Question').inputValue()).toBe('Do you ship abroad?');
    await context.close();
  }, 120_000);

  it('marks the FAQ item the server refused as the form shows it, blank items in between, and says what was added in words', async () => {
    const { project } = await createProject(stack.t, {}, 'FAQ shop');
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/knowledge`);
    await page.getByRole('radio', { name: 'FAQ' }).check();
    await page.getByLabel('Question 1').fill('Do you ship abroad?');
    await page.getByLabel('Answer 1').fill('Yes, we ship to every country in the European Union.');
    // Item 2 is left blank (it is not sent); item 3 has a question without its answer.
    await page.getByRole('button', { name: 'Add a question' }).click();
    await page.getByRole('button', { name: 'Add a question' }).click();
    await page.getByLabel('Question 3').fill('How much is shipping?');
    await page.getByRole('button', { name: 'Add source' }).click();
    const answer3 = page.getByLabel('Answer 3');
    await expect.poll(() => answer3.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Answer 2').getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Question 2').getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Question 3').inputValue()).toBe('How much is shipping?');
    expect(await sources(project.id)).toEqual([]);

    await answer3.fill('Shipping is free above 50 euros.');
    await page.getByRole('button', { name: 'Add source' }).click();
    const added = page.getByRole('status').filter({ hasText: 'added' });
    await expect.poll(() => added.textContent()).toBe('FAQ added with 2 questions: it is being read now.');
    const [stored] = await eventually(async () => {
      const all = await sources(project.id);
      return all.length === 1 && all[0].status === 'ready' ? all : undefined;
    }, 'the FAQ to be ready');
    expect(stored.type).toBe('faq');
    await page.locator(`tr[data-source-id="${stored.id}"] [data-status="ready"]`).waitFor({ timeout: 20_000 });
    expect(await page.locator('main').textContent()).not.toContain(stored.id);
    await context.close();
  }, 120_000);

  it('uploads several dropped files, each with its own result, and keeps a refused one with the reason', async () => {
    const { project } = await createProject(stack.t, {}, 'Upload shop');
    const admin = await seedUser(stack.t, { projectId: project.id, role: 'admin' });
    const context = await newContext(browser, 360);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/knowledge`);
    await page.getByRole('radio', { name: 'Files' }).check();
    const dropped = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['# Opening hours\n\nThe shop is open from 9 to 18 on weekdays.'], 'hours.md', { type: 'text/markdown' }));
      dt.items.add(new File(['Gift cards never expire and can be used online.'], 'gift-cards.txt', { type: 'text/plain' }));
      // A Word document is a ZIP archive whatever its name: the server refuses it.
      dt.items.add(new File([new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0])], 'contract.md', { type: 'text/markdown' }));
      return dt;
    });
    await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
    await page.getByRole('button', { name: 'Upload 3 files' }).click();
    const list = page.getByRole('list', { name: 'Files to upload' });
    await list.locator('li[data-state="done"]', { hasText: 'hours.md' }).waitFor();
    await list.locator('li[data-state="done"]', { hasText: 'gift-cards.txt' }).waitFor();
    const refused = list.locator('li[data-state="failed"]', { hasText: 'contract.md' });
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/\.md|Markdown|text/i);

    await page.locator('tr', { hasText: 'Opening hours' }).locator('[data-status="ready"]').waitFor({ timeout: 20_000 });
    await page.locator('tr', { hasText: 'gift-cards' }).locator('[data-status="ready"]').waitFor({ timeout: 20_000 });
    const stored = await sources(project.id);
    expect(stored.map((s) => s.type).sort()).toEqual(['markdown', 'text']);
    expect(stored.every((s) => s.chunkCount > 0)).toBe(true);

    await expectNoSidewaysScroll(page, 'Knowledge');
    await expectAccessible(page, 'Knowledge at 360 px');
    await screenshot(page, `knowledge-upload-360-${dialect.name}`);
    await context.close();
  }, 120_000);

  it('lets a viewer read and search but not change anything, and the server refuses too', async () => {
    const { project } = await createProject(stack.t, {}, 'Viewer shop');
    await adminApi(stack.t, 'POST', `/projects/${project.id}/knowledge`, { type: 'text', title: 'Warranty', content: 'Every product has a two year warranty.' });
    const viewer = await seedUser(stack.t, { projectId: project.id, role: 'viewer' });
    const context = await newContext(browser);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${project.id}/knowledge`);
    await page.locator('tr', { hasText: 'Warranty' }).locator('[data-status="ready"]').waitFor({ timeout: 20_000 });
    await page.getByText('read-only access').waitFor();
    expect(await page.getByRole('button', { name: 'Add source' }).isDisabled()).toBe(true);
    expect(await page.locator('tr', { hasText: 'Warranty' }).getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
    await page.getByLabel('Question').fill('warranty');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('list', { name: /Passages found/ }).textContent()).toContain('two year warranty');

    const refused = await callFromPage(page, 'POST', `/api/v1/admin/projects/${project.id}/knowledge`, { type: 'text', content: 'sneaky' });
    expect(refused).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await sources(project.id)).length).toBe(1);
    await expectAccessible(page, 'Knowledge (viewer)');
    await context.close();
  }, 120_000);
});
