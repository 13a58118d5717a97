import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appendMessage } from '../../src/conversations/messages.js';
import { auth, createProject, dialects } from '../helper.js';
import { browserAvailable, launchBrowser, newContext, screenshot, seedUser, signIn, startDashboard, type DashboardStack } from './browser.js';

/**
 * The activity feed's cadence as the contract fixes it (spec, Limits): a poll every 2 seconds, at
 * most 50 messages each, monitoring for at most 5 minutes, then paused until "Resume". The page's
 * clock is Playwright's, so minutes pass in milliseconds; the server and its data are real.
 */
describe.skipIf(!browserAvailable()).each(dialects)('dashboard activity feed in chromium ($name)', (dialect) => {
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

  it('polls every 2 s for at most 50 messages, shows new ones without reloading, pauses after 5 minutes, and resumes', async () => {
    const p = await createProject(stack.t, {}, 'Busy shop');
    const owner = await seedUser(stack.t, { role: 'owner' });
    const db = stack.t.deps.store.db;
    const conv = (await stack.t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: { endUserExternalId: 'shopper-7' } })).json()
      .conversationId as string;
    await appendMessage(db, { id: conv, project_id: p.project.id }, { role: 'user', content: 'Where is my parcel?', status: 'complete' });
    // The feed trails the clock by a second (docs/admin-api.md), so the message must be older than that.
    await new Promise((resolve) => setTimeout(resolve, 1100));

    const page = await context.newPage();
    await signIn(page, stack.origin, owner.email, owner.password);
    const polls: string[] = [];
    page.on('request', (req) => {
      if (req.url().includes(`/projects/${p.project.id}/activity`)) polls.push(req.url());
    });
    // The page's clock stands still unless the test moves it; each poll notes the page's time.
    const start = Date.now();
    await page.clock.install({ time: start });
    await page.clock.pauseAt(start + 1000);
    await page.addInitScript(() => {
      const w = window as unknown as { pollTimes: number[] };
      w.pollTimes = [];
      const original = window.fetch.bind(window);
      window.fetch = (input, init) => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        if (url.includes('/activity')) w.pollTimes.push(Date.now());
        return original(input, init);
      };
    });
    // With the clock standing, the load event waits for it: go on once the page is committed.
    await page.goto(`${stack.origin}/dashboard/p/${p.project.id}/activity`, { waitUntil: 'commit' });
    // The query cache hands results over on a zero-delay timer: let the standing clock move by steps
    // of 10 ms until the page has drawn.
    for (let i = 0; i < 200 && !(await page.getByText('Where is my parcel?').isVisible()); i++) await page.clock.runFor(10);
    await page.getByText('Where is my parcel?').waitFor();
    expect(polls).toHaveLength(1);
    await expect(page.locator('[data-feed-state]').textContent()).resolves.toContain('every 2 seconds');
    const pollTimes = () => page.evaluate(() => (window as unknown as { pollTimes: number[] }).pollTimes);
    const sinceFirst = async () => (await page.evaluate(() => Date.now())) - (await pollTimes())[0];

    // Just before 2 s: nothing yet; at 2 s: the next poll, and so on.
    await page.clock.runFor(1999 - (await sinceFirst()));
    expect(polls).toHaveLength(1);
    const answered = waitForPoll(page, p.project.id);
    await appendMessage(db, { id: conv, project_id: p.project.id }, { role: 'assistant', content: 'It left our warehouse today.', status: 'complete' });
    await appendMessage(db, { id: conv, project_id: p.project.id }, {
      role: 'assistant',
      content: 'Dana here: I have asked the carrier.',
      status: 'complete',
      author: { type: 'human', id: null, name: 'Dana' },
    });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await page.clock.runFor(1);
    await answered;
    expect(polls).toHaveLength(2);
    await page.getByText('It left our warehouse today.').waitFor();
    // Each says who wrote it: a person of the team by name, not "Assistant".
    const badge = (text: string) => page.locator('.feed li', { hasText: text }).locator('.badge').first().textContent();
    await expect(badge('It left our warehouse today.')).resolves.toBe('Assistant');
    await expect(badge('Dana here: I have asked the carrier.')).resolves.toBe('Team · Dana');
    await expect(badge('Where is my parcel?')).resolves.toBe('Visitor');
    for (let i = 0; i < 3; i++) {
      const next = waitForPoll(page, p.project.id);
      await page.clock.runFor(2000);
      await next;
    }
    expect(polls).toHaveLength(5);
    const times = await pollTimes();
    expect(times.slice(1).map((t, i) => t - times[i])).toEqual([2000, 2000, 2000, 2000]);

    // A burst of 60 messages between two polls: the poll asks for 50, and gets the newest 50.
    for (let i = 0; i < 60; i++) await appendMessage(db, { id: conv, project_id: p.project.id }, { role: 'user', content: `Burst message ${i}`, status: 'complete' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const burst = waitForPoll(page, p.project.id);
    await page.clock.runFor(2000);
    const burstBody = (await (await burst).json()) as { messages: unknown[]; truncated: boolean };
    expect(burstBody.messages).toHaveLength(50);
    expect(burstBody.truncated).toBe(true);
    // Rows written in the same millisecond have no order among them, so which 50 is not fixed; 50 it is.
    await expect.poll(() => page.locator('.feed li', { hasText: 'Burst message' }).count()).toBe(50);
    await page.getByText('More than 50 messages arrived between two checks').waitFor();
    for (const url of polls) expect(new URL(url).searchParams.get('limit')).toBe('50');
    // Every poll after the first continues from the previous one's cursor.
    expect(polls.slice(1).every((url) => new URL(url).searchParams.has('after'))).toBe(true);
    // (axe-core runs on timers, so the activity page is checked in pages.test.ts, with a running clock.)

    // Five minutes after the page opened, polling stops and the page says so.
    await page.clock.fastForward(5 * 60_000);
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await expect(page.locator('[data-feed-state]').textContent()).resolves.toContain('Paused');
    const stoppedAt = polls.length;
    await page.clock.runFor(60_000);
    expect(polls).toHaveLength(stoppedAt);
    await screenshot(page, `activity-paused-${dialect.name}`);

    // Resume: a new monitoring session, polling at once and every 2 s again.
    const resumed = waitForPoll(page, p.project.id);
    await page.getByRole('button', { name: 'Resume' }).click();
    await resumed;
    expect(polls).toHaveLength(stoppedAt + 1);
    await expect(page.locator('[data-feed-state]').textContent()).resolves.toContain('every 2 seconds');
    const again = waitForPoll(page, p.project.id);
    await page.clock.runFor(2000);
    await again;
    expect(polls).toHaveLength(stoppedAt + 2);
  }, 90_000);
});

/**
 * The next poll's answer, which must be a 200: any other answer fails here with its status and
 * body, and a poll that never comes fails with when the page polled, rather than a bare timeout.
 */
async function waitForPoll(page: Page, projectId: string) {
  const res = await page.waitForResponse((r) => r.url().includes(`/projects/${projectId}/activity`)).catch(async (err: Error) => {
    const polled = await page.evaluate(() => ({ now: Date.now(), pollTimes: (window as unknown as { pollTimes: number[] }).pollTimes }));
    throw new Error(`No activity poll answered; the page's clock is at ${polled.now} and it polled at ${polled.pollTimes.join(', ')}: ${err.message}`);
  });
  expect(res.status(), await res.text()).toBe(200);
  return res;
}
