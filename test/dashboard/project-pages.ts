import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { createUser } from '../../src/accounts/users.js';
import type { ProjectRole } from '../../src/accounts/types.js';
import { adminAuth, type TestApp } from '../helper.js';

/** Shared by the Knowledge, Actions, Skills and Conversations browser tests. */

export const PASSWORD = 'correct horse battery staple';

let n = 0;
/** A dashboard user: the instance owner, or a member with one role on one project. */
export async function seedUser(t: TestApp, role: 'owner' | { projectId: string; role: ProjectRole }): Promise<{ email: string; password: string }> {
  const email = `user${++n}-${Date.now()}@example.com`;
  await createUser(t.deps.store.db, {
    email,
    name: role === 'owner' ? `Owner ${n}` : `${role.role[0].toUpperCase()}${role.role.slice(1)} ${n}`,
    role: role === 'owner' ? 'owner' : 'member',
    password: PASSWORD,
    memberships: role === 'owner' ? [] : [{ projectId: role.projectId, role: role.role }],
  });
  return { email, password: PASSWORD };
}

/** An admin API call with the instance token, as the test's own view of the stored rows. */
export async function adminApi<T = Record<string, unknown>>(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number; body: T }> {
  const res = await t.app.inject({ method, url: `/api/v1/admin${url}`, headers: adminAuth(), ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) });
  return { status: res.statusCode, body: (res.body ? res.json() : null) as T };
}

/** A call made by the page itself, with its session cookie, from its own origin: what the server decides for this user. */
export async function callFromPage(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const res = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    { method, path, body },
  );
}

/** Usable on a 360 px phone: nothing makes the page scroll sideways. */
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const { scroll, width, wide } = await page.evaluate(() => {
    const width = window.innerWidth;
    // The innermost elements reaching past the right edge: what to fix when this fails.
    const clipped = (el: Element) => {
      for (let p = el.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') return true;
      return false;
    };
    const past = (el: Element) => el.getBoundingClientRect().right > width + 1 && !clipped(el);
    const wide = Array.from(document.querySelectorAll('body *'))
      .filter((el) => past(el) && !Array.from(el.children).some(past))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''} → ${Math.round(el.getBoundingClientRect().right)}px`);
    return { scroll: document.documentElement.scrollWidth, width, wide };
  });
  expect(scroll, `${what} scrolls sideways at ${width} px: ${wide.join(', ')}`).toBeLessThanOrEqual(width);
}

/** Polls `check` until it returns a value (not undefined), for rows written by background work. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
