import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { evalRunCreated, evalSuiteSchema, evalSuiteSummarySchema } from '../../src/api/evals/schema.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../src/knowledge/jobs.js';
import type { CreatedProject } from '../../src/projects/projects.js';
import { createProject, dialects } from '../helper.js';
import { addSource, waitForSource } from '../support/knowledge.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, signIn, startDashboard, type DashboardStack } from './browser.js';
import { adminApi, callFromPage, expectNoSidewaysScroll, seedUser } from './project-pages.js';

type EvalRunResponse = z.infer<typeof evalRunCreated>;
type EvalSuite = z.infer<typeof evalSuiteSchema>;
type EvalSuiteSummary = z.infer<typeof evalSuiteSummarySchema>;
type Metrics = EvalRunResponse['run']['metrics'];

const RETURNS = `# Returns

## Return window

You can return any unworn item within 30 days of delivery for a full refund. Use the prepaid label that came in the box.
`;

const SHIPPING = `# Shipping

## Delivery times

Standard delivery inside the Netherlands takes two business days. Express delivery arrives the next morning before noon.
`;

const WRAPPING = 'Do you sell gift wrapping?';

/** The figures as the page shows them (dashboard/src/components/evals/cases.ts), worked out here from what the API stored. */
const rate = (v: number | null) => (v === null ? '—' : `${Math.round(v * 1000) / 10}%`);
function shownFigures(m: Metrics): Record<string, string> {
  return {
    passed: `${m.passed} of ${m.cases}`,
    hitAt3: rate(m.hitAt3),
    mrrAt10: m.mrrAt10 === null ? '—' : m.mrrAt10.toFixed(2),
    citesExpectedSource: rate(m.citesExpectedSource),
    keyTermsPresent: rate(m.keyTermsPresent),
    unanswerableDeclined: rate(m.unanswerableDeclined),
    answeredAnyway: `${m.answeredAnyway} of ${m.unanswerable}`,
    wronglyDeclined: `${m.wronglyDeclined} of ${m.answerable}`,
  };
}

/** What the page shows in a column of the figures table, by figure. */
async function figures(page: Page, cell: 'value' | 'previous' | 'change'): Promise<Record<string, string>> {
  return page.locator('table.eval-metrics tbody tr').evaluateAll(
    (rows, cell) => Object.fromEntries(rows.map((r) => [r.getAttribute('data-metric')!, r.querySelector(`[data-cell="${cell}"]`)?.textContent?.trim() ?? ''])),
    cell,
  );
}

/** Each case's result as the page shows it. */
async function shownResults(page: Page) {
  return page.locator('ol.eval-results > li').evaluateAll((items) =>
    items.map((li) => ({
      passed: li.getAttribute('data-passed') === 'true',
      badge: li.querySelector('.badge')?.textContent,
      question: li.querySelector('.gap-question')?.textContent,
      outcome: li.querySelector('[data-cell="outcome"]')?.textContent,
      cited: li.querySelector('[data-cell="cited"]')?.textContent,
      why: li.querySelector('[data-cell="why"]')?.textContent ?? null,
    })),
  );
}

const isFocused = (locator: Locator) => locator.evaluate((el) => el === document.activeElement);

/**
 * The Evals page in chromium against the real server, a real ingestion worker and the builtin
 * model: a suite made in the editor (typed and imported cases, the API's errors in place), run,
 * its per-case results and figures checked against what the API stored, run again after a
 * knowledge change to show what got worse, deleted; and a viewer who can only read.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard Evals page ($name)', (dialect) => {
  let stack: DashboardStack;
  let worker: KnowledgeWorker;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startDashboard(dialect);
    worker = startKnowledgeWorker(stack.t.deps, { pollMs: 50 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await stack?.close();
  });

  async function seedProject(name: string): Promise<{ p: CreatedProject; shippingId: string }> {
    const p = await createProject(stack.t, { model: 'builtin' }, name);
    const returns = await addSource(stack.t.app, p.project.id, { type: 'markdown', title: 'Returns', content: RETURNS });
    const shipping = await addSource(stack.t.app, p.project.id, { type: 'markdown', title: 'Shipping', content: SHIPPING });
    for (const s of [returns, shipping]) expect((await waitForSource(stack.t.app, p.project.id, s.id)).status).toBe('ready');
    return { p, shippingId: shipping.id };
  }

  const evalsUrl = (projectId: string, path = '') => `/projects/${projectId}/evals${path}`;

  it('creates a suite in the editor, runs it, shows each result and the figures as stored, then what a knowledge change made worse; deletes it', async () => {
    const { p, shippingId } = await seedProject('Evals shop');
    const projectId = p.project.id;
    const admin = await seedUser(stack.t, { projectId, role: 'admin' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack.origin, admin.email, admin.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Evals' }).click();
    await page.getByRole('heading', { name: 'Evals', level: 1 }).waitFor();
    expect(await page.title()).toBe('Evals · AnswerDesk');
    await page.getByText(/No suites yet\. A suite is a set of questions/).waitFor();
    await expectAccessible(page, 'Evals (empty)');

    // The editor takes the focus.
    await page.getByRole('button', { name: 'New suite' }).click();
    await expect.poll(() => isFocused(page.getByRole('heading', { name: 'New suite' }))).toBe(true);
    await page.getByLabel('Name').fill('Basics');
    await page.getByLabel('Question 1').fill('How long do I have to return an item?');
    await page.getByLabel('Expected sources 1').fill('Returns');
    await page.getByLabel('Key terms 1').fill('30 days');
    // A case added takes the focus on its question; a blank one is left out when sending.
    await page.getByRole('button', { name: 'Add a case' }).click();
    await expect.poll(() => isFocused(page.getByLabel('Question 2'))).toBe(true);
    await page.getByRole('button', { name: 'Add a case' }).click();
    await page.getByLabel('Question 3').fill(WRAPPING);
    const case3 = page.locator('li[data-case="3"]');
    await case3.getByLabel('The help content answers it').uncheck();
    await page.getByLabel('Key terms 3').fill('wrapping');

    // The API's refusal lands on the case and field it names (case 3 of the form, the second sent).
    await page.getByRole('button', { name: 'Create suite' }).click();
    const terms3 = page.getByLabel('Key terms 3');
    await expect.poll(() => terms3.getAttribute('aria-invalid')).toBe('true');
    const described = await terms3.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${described!.split(' ').pop()}"]`).textContent()).toBe('an unanswerable case (answerable: false) has no expected sources or key terms');
    expect(await page.getByLabel('Key terms 1').getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Question 1').inputValue()).toBe('How long do I have to return an item?');
    await page.getByText('Please correct the marked fields.').waitFor();
    expect((await adminApi<{ evals: unknown[] }>(stack.t, 'GET', evalsUrl(projectId))).body.evals).toEqual([]);
    await expectAccessible(page, 'Evals (editor with an error)');
    await screenshot(page, `evals-editor-${dialect.name}`);
    await terms3.fill('');

    // Removing the blank case hands the focus to the case after it.
    await page.getByRole('button', { name: 'Remove case 2' }).click();
    await expect.poll(() => isFocused(page.getByLabel('Question 2'))).toBe(true);
    expect(await page.getByLabel('Question 2').inputValue()).toBe(WRAPPING);

    // Import: a file that is not JSON is named with where it breaks; the CLI's annotated format is read as it does.
    await page.getByText('Import cases from JSON').click();
    await page.getByLabel('JSON file of cases').setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('[{"question": "a",\n  oops}]') });
    await page.getByRole('alert').filter({ hasText: /^broken\.json: Invalid JSON at line 2/ }).waitFor();
    const annotated = { cases: [{ id: 'ship-1', question: 'How long does standard delivery take?', expectedSources: [shippingId], mustContain: ['two business days'], tags: ['shipping'] }] };
    await page.getByLabel('JSON file of cases').setInputFiles({ name: 'cases.json', mimeType: 'application/json', buffer: Buffer.from(`\uFEFF${JSON.stringify(annotated)}`) });
    await page.getByText('Added 1 case from cases.json.').waitFor();
    expect(await page.getByLabel('Question 3').inputValue()).toBe('How long does standard delivery take?');
    await page.getByLabel('Or paste the JSON').fill('[{"question": "Can I pay with a cheque?", "answerable": "no"}]');
    await page.getByRole('button', { name: 'Add the pasted cases' }).click();
    await page.getByText('The pasted JSON: Case 1: "answerable" must be true or false.').waitFor();
    expect(await page.getByLabel('Question 4').count()).toBe(0);

    await page.getByRole('button', { name: 'Create suite' }).click();
    await page.getByRole('heading', { name: 'Basics', level: 1 }).waitFor();
    await page.getByText('Created “Basics”. Run it to see how the agent answers its questions.').waitFor();
    await expect.poll(() => isFocused(page.getByRole('heading', { name: 'Basics', level: 1 }))).toBe(true);
    const [listed] = (await adminApi<{ evals: EvalSuiteSummary[] }>(stack.t, 'GET', evalsUrl(projectId))).body.evals;
    expect(page.url()).toBe(`${stack.origin}/dashboard/p/${projectId}/evals/${listed!.id}`);
    const suiteUrl = evalsUrl(projectId, `/${listed!.id}`);
    expect((await adminApi<{ eval: EvalSuite }>(stack.t, 'GET', suiteUrl)).body.eval.cases).toEqual([
      { question: 'How long do I have to return an item?', expectedSources: ['Returns'], mustContain: ['30 days'] },
      { question: WRAPPING, answerable: false },
      { question: 'How long does standard delivery take?', expectedSources: [shippingId], mustContain: ['two business days'] },
    ]);
    await expectAccessible(page, 'Evals (a suite not run yet)');

    // Run: the results heading takes the focus; each case and the figures are what the API stored.
    await page.getByRole('button', { name: 'Run suite' }).click();
    const runHeading = page.getByRole('heading', { name: /^Last run, / });
    await runHeading.waitFor();
    await expect.poll(() => isFocused(runHeading)).toBe(true);
    await page.getByRole('status').filter({ hasText: 'Run finished: 3 of 3 cases passed.' }).waitFor();
    const firstRunId = (await adminApi<{ eval: EvalSuite }>(stack.t, 'GET', suiteUrl)).body.eval.runs[0]!.id;
    expect(page.url()).toContain(`?run=${firstRunId}`);
    const first = (await adminApi<EvalRunResponse>(stack.t, 'GET', evalsUrl(projectId, `/${listed!.id}/runs/${firstRunId}`))).body;
    expect(first.comparison).toBeNull();
    expect(first.run.metrics).toMatchObject({ cases: 3, passed: 3, answeredAnyway: 0 });
    expect(await figures(page, 'value')).toEqual(shownFigures(first.run.metrics));
    expect(await page.locator('table.eval-metrics [data-cell="change"]').count()).toBe(0);
    await page.getByText('The first run of this suite: nothing to compare with.').waitFor();
    expect(await shownResults(page)).toEqual(
      first.run.results.map((r) => ({
        passed: r.passed,
        badge: r.passed ? 'pass' : 'fail',
        question: r.question,
        outcome: r.outcome,
        cited: r.cited.length ? `Cited: ${r.cited.map((c) => c.title).join(', ')}` : 'Cited no source.',
        why: null,
      })),
    );
    expect(first.run.results.map((r) => [r.outcome, r.cited.map((c) => c.title)])).toEqual([
      ['answered', ['Returns']],
      ['declined', []],
      ['answered', ['Shipping']],
    ]);
    await expectAccessible(page, 'Evals (first run)');
    await screenshot(page, `evals-first-run-${dialect.name}`);

    // The knowledge changes: gift wrapping is now covered, so the question meant to be declined is answered.
    const faq = await addSource(stack.t.app, projectId, { type: 'faq', items: [{ question: WRAPPING, answer: 'Yes, gift wrapping costs €3.50 per order; choose it at checkout.' }] });
    expect((await waitForSource(stack.t.app, projectId, faq.id)).status).toBe('ready');
    await page.getByRole('button', { name: 'Run suite' }).click();
    await page.getByRole('status').filter({ hasText: 'Run finished: 2 of 3 cases passed.' }).waitFor();
    const runs = (await adminApi<{ eval: EvalSuite }>(stack.t, 'GET', suiteUrl)).body.eval.runs;
    expect(runs.map((r) => r.id)).toHaveLength(2);
    expect(runs[1]!.id).toBe(firstRunId);
    await expect.poll(() => page.url()).toContain(`?run=${runs[0]!.id}`);
    const second = (await adminApi<EvalRunResponse>(stack.t, 'GET', evalsUrl(projectId, `/${listed!.id}/runs/${runs[0]!.id}`))).body;
    expect(second.comparison).toMatchObject({ previousRunId: firstRunId, nowFailing: [WRAPPING], nowPassing: [], delta: { passed: -1, answeredAnyway: 1, unanswerableDeclined: -1 } });

    const checkSecondRun = async () => {
      await page.getByRole('heading', { name: /^Last run, / }).waitFor();
      expect(await figures(page, 'value')).toEqual(shownFigures(second.run.metrics));
      expect(await figures(page, 'previous')).toEqual(shownFigures(first.run.metrics));
      const change = await figures(page, 'change');
      expect(change).toMatchObject({ passed: '−1 worse', answeredAnyway: '+1 worse', unanswerableDeclined: '−100 pts worse', hitAt3: 'no change', wronglyDeclined: 'no change' });
      expect(await page.getByRole('list', { name: 'Now failing' }).getByRole('listitem').allTextContents()).toEqual(second.comparison!.nowFailing);
      expect(await page.getByRole('list', { name: 'Now passing' }).count()).toBe(0);
      const wrapping = (await shownResults(page))[1]!;
      const stored = second.run.results[1]!;
      expect(stored).toMatchObject({ question: WRAPPING, outcome: 'answered', passed: false, declined: false });
      expect(wrapping).toEqual({
        passed: false,
        badge: 'fail',
        question: WRAPPING,
        outcome: 'answered',
        cited: `Cited: ${stored.cited.map((c) => c.title).join(', ')}`,
        why: 'Why: answered anyway, though the help content does not answer it',
      });
      expect(stored.cited.map((c) => c.sourceId)).toEqual([faq.id]);
    };
    await checkSecondRun();
    await expectAccessible(page, 'Evals (a run compared with the one before)');
    await screenshot(page, `evals-compared-${dialect.name}`);

    // The run shown is kept in the address: a reload shows it again, read back with its results and comparison.
    await page.reload();
    await checkSecondRun();

    // An older run from the list of runs; Back returns to the newer one.
    await page.getByRole('table', { name: /kept runs/ }).locator(`tr[data-run-id="${firstRunId}"]`).getByRole('link').click();
    await page.getByRole('heading', { name: /^Run, / }).waitFor();
    expect(await figures(page, 'value')).toEqual(shownFigures(first.run.metrics));
    await page.goBack();
    await page.getByRole('heading', { name: /^Last run, / }).waitFor();

    // The list shows each suite's last run.
    await page.getByRole('link', { name: '← All suites' }).click();
    const row = page.locator(`tr[data-eval-id="${listed!.id}"]`);
    await row.waitFor();
    expect(await row.locator('[data-metric]').evaluateAll((cells) => cells.map((c) => [c.getAttribute('data-metric'), c.textContent]))).toEqual([
      ['passed', '2 of 3'],
      ['hitAt3', rate(second.run.metrics.hitAt3)],
      ['mrrAt10', second.run.metrics.mrrAt10!.toFixed(2)],
      ['answeredAnyway', '1'],
    ]);
    await expectAccessible(page, 'Evals (list)');

    // Delete asks once more; the suite and its runs are gone.
    await row.getByRole('link', { name: 'Basics' }).click();
    await page.getByRole('button', { name: 'Delete suite' }).click();
    await page.getByRole('button', { name: 'Delete “Basics” and its runs' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Basics” and its runs.' }).waitFor();
    await page.getByRole('heading', { name: 'Evals', level: 1 }).waitFor();
    expect((await adminApi(stack.t, 'GET', suiteUrl)).status).toBe(404);
    expect(await stack.t.deps.store.db.selectFrom('eval_runs').select('id').where('eval_id', '=', listed!.id).execute()).toEqual([]);
    // Said once: a reload does not say it again.
    await page.reload();
    await page.getByText(/No suites yet\./).waitFor();
    expect(await page.getByText('Deleted “Basics” and its runs.').count()).toBe(0);
    await context.close();
  }, 180_000);

  it('lets a viewer read suites and runs but not create, run or delete them (the server refuses too), at 360 px', async () => {
    const { p } = await seedProject('Evals viewer shop');
    const projectId = p.project.id;
    const created = await adminApi<{ eval: EvalSuite }>(stack.t, 'POST', evalsUrl(projectId), {
      name: 'Returns',
      cases: [{ question: 'How long do I have to return an item?', expectedSources: ['Returns'], mustContain: ['30 days'] }],
    });
    const suiteId = created.body.eval.id;
    const ran = await adminApi<EvalRunResponse>(stack.t, 'POST', evalsUrl(projectId, `/${suiteId}/run`));
    expect(ran.status).toBe(201);

    const viewer = await seedUser(stack.t, { projectId, role: 'viewer' });
    const context = await newContext(browser, 360);
    const page = await context.newPage();
    await signIn(page, stack.origin, viewer.email, viewer.password);
    await page.goto(`${stack.origin}/dashboard/p/${projectId}/evals`);
    await page.getByRole('heading', { name: 'Evals', level: 1 }).waitFor();
    await page.getByText('You have read-only access to this project').waitFor();
    expect(await page.getByRole('button', { name: 'New suite' }).isDisabled()).toBe(true);
    const row = page.locator(`tr[data-eval-id="${suiteId}"]`);
    expect(await row.locator('[data-metric="passed"]').textContent()).toBe('1 of 1');
    expect(await row.getByRole('button', { name: 'Delete Returns' }).isDisabled()).toBe(true);
    await expectNoSidewaysScroll(page, 'Evals list (viewer)');
    await expectAccessible(page, 'Evals (viewer, 360 px)');

    await row.getByRole('link', { name: 'Returns' }).click();
    await page.getByRole('heading', { name: 'Returns', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /^Last run, / }).waitFor();
    expect(await figures(page, 'value')).toEqual(shownFigures(ran.body.run.metrics));
    expect(await page.getByRole('button', { name: 'Run suite' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete suite' }).isDisabled()).toBe(true);
    await expectNoSidewaysScroll(page, 'Evals suite (viewer)');
    await expectAccessible(page, 'Evals suite (viewer, 360 px)');
    await screenshot(page, `evals-viewer-360-${dialect.name}`);

    // The server decides anyway.
    const base = `/api/v1/admin/projects/${projectId}/evals`;
    expect(await callFromPage(page, 'POST', base, { name: 'Mine', cases: [{ question: 'q' }] })).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect(await callFromPage(page, 'POST', `${base}/${suiteId}/run`)).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect(await callFromPage(page, 'POST', `${base}/run`, { cases: [{ question: 'q' }] })).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect(await callFromPage(page, 'DELETE', `${base}/${suiteId}`)).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect((await callFromPage(page, 'GET', `${base}/${suiteId}/runs/${ran.body.run.id}`)).status).toBe(200);
    const after = (await adminApi<{ eval: EvalSuite }>(stack.t, 'GET', evalsUrl(projectId, `/${suiteId}`))).body.eval;
    expect(after.runs.map((r) => r.id)).toEqual([ran.body.run.id]);
    expect((await adminApi<{ evals: unknown[] }>(stack.t, 'GET', evalsUrl(projectId))).body.evals).toHaveLength(1);
    await context.close();
  }, 120_000);
});
