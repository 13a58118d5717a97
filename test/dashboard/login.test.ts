import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helper.js';
import { browserAvailable, expectAccessible, launchBrowser, newContext, screenshot, startDashboard, type DashboardStack } from './browser.js';
import { seedUser } from './project-pages.js';

/** The way in: without a session every dashboard page leads to the login form. */
describe.skipIf(!browserAvailable())('dashboard login page in chromium', () => {
  let stack: DashboardStack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startDashboard(dialects[0]);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('sends a visitor without a session to a labelled, accessible login form and back afterwards', async () => {
    for (const width of [1280, 360]) {
      const context = await newContext(browser, width);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('console', (msg) => {
        if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) errors.push(msg.text());
      });
      await page.goto(`${stack.origin}/dashboard/p/proj_demo/analytics`);
      await page.getByRole('heading', { name: 'Sign in to AnswerDesk' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');
      expect(new URL(page.url()).searchParams.get('next')).toBe('/p/proj_demo/analytics');
      await expect(page.getByLabel('Email').getAttribute('type')).resolves.toBe('email');
      await expect(page.getByLabel('Password').getAttribute('type')).resolves.toBe('password');
      await expect(page.getByRole('button', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
      // Usable at 360 px: nothing wider than the window.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await expectAccessible(page, `login at ${width}px`);
      await screenshot(page, `login-${width}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('signs in to a page of this site only: a next that names another site leads home', async () => {
    const owner = await seedUser(stack.t, 'owner');
    for (const next of ['/\\evil.example', '//evil.example', '/\\/evil.example']) {
      const context = await newContext(browser);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${stack.origin}/dashboard/login?next=${encodeURIComponent(next)}`);
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
      expect(new URL(page.url()).origin, next).toBe(stack.origin);
      expect(new URL(page.url()).pathname, next).not.toBe('/dashboard/login');
      expect(errors, next).toEqual([]);
      await context.close();
    }
  });
});
