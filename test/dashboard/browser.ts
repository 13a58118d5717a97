import { readFileSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildDashboard, DASHBOARD_DIR, newestSourceMtime } from '../../dashboard/build.js';
import type { ProjectRole, UserRole } from '../../src/accounts/types.js';
import { createUser } from '../../src/accounts/users.js';
import { createTestApp, type DialectCase, type TestApp } from '../helper.js';
import { ARTIFACTS, buildOnce as buildWidgetOnce } from '../widget/harness.js';

export { browserAvailable, launchBrowser } from '../widget/harness.js';

const LOCK = `${DASHBOARD_DIR}.lock`;

/**
 * Makes sure dist/dashboard is built from the current sources: rebuilt when any file under
 * dashboard/ is newer than the build. Test files run in parallel processes, so one builds while the
 * others wait on a lock directory (mkdir is atomic).
 */
async function ensureFreshBuild(): Promise<void> {
  const stale = async () => {
    const built = await stat(path.join(DASHBOARD_DIR, 'index.html')).catch(() => null);
    return !built || built.mtimeMs < (await newestSourceMtime());
  };
  if (!(await stale())) return;
  for (let waited = 0; ; waited += 200) {
    try {
      await mkdir(LOCK, { recursive: false });
      break;
    } catch {
      // A lock left by a killed run is stale after two minutes.
      const info = await stat(LOCK).catch(() => null);
      if (info && Date.now() - info.mtimeMs > 120_000) await rm(LOCK, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (waited > 180_000) throw new Error('gave up waiting for another process building the dashboard');
    }
  }
  try {
    if (await stale()) await buildDashboard();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

let built: Promise<unknown> | null = null;
/** Builds the widget and the dashboard once per test process. */
export function buildOnce(): Promise<unknown> {
  built ??= Promise.all([buildWidgetOnce(), ensureFreshBuild()]);
  return built;
}

export interface DashboardStack {
  t: TestApp;
  /** http://127.0.0.1:<port>: the server, serving the dashboard at /dashboard. */
  origin: string;
  close(): Promise<void>;
}

/** The real server (the whole app over a fresh database) on a free port, with a fresh dashboard build. */
export async function startDashboard(dialect: DialectCase, env: Record<string, string> = {}): Promise<DashboardStack> {
  await buildOnce();
  const t = await createTestApp({ dialect, env });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return { t, origin, close: () => t.close() };
}

/** A browser context as a person uses it: a laptop window, or a phone 360 px wide. */
export async function newContext(browser: Browser, width = 1280): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width, height: width < 600 ? 780 : 860 } });
  // Fail with the locator that did not show up, before the test's own timeout hides it.
  context.setDefaultTimeout(15_000);
  return context;
}

/** Signs in through the login form, as a person would, and waits for the signed-in frame. */
export async function signIn(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/dashboard/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core (WCAG 2 A/AA rules) on the page as it is now and fails on any serious or critical
 * violation, listing them. Injected through the DevTools protocol, so the page's CSP does not apply.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `axe on ${what}`).toEqual([]);
}

/** A full-page screenshot into test-artifacts/dashboard-<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
}

export interface SeededUser {
  id: string;
  email: string;
  name: string;
  password: string;
}

let seeded = 0;
/**
 * A dashboard user made through the accounts core (the accounts API has its own tests): an owner,
 * or a member with roles on projects. Each call makes a new e-mail, so tests never share a user.
 */
export async function seedUser(
  t: TestApp,
  options: { role?: UserRole; memberships?: Array<{ projectId: string; role: ProjectRole }>; name?: string } = {},
): Promise<SeededUser> {
  const n = ++seeded;
  const email = `person${n}-${Date.now()}@example.com`;
  const password = `correct horse ${n} battery`;
  const name = options.name ?? `Person ${n}`;
  const user = await createUser(t.deps.store.db, { email, name, role: options.role ?? 'owner', password, memberships: options.memberships ?? [] });
  return { id: user.id, email, name, password };
}
