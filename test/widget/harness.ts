import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildWidget } from '../../widget/build.js';
import { adminAuth, createTestApp, type DialectCase, type TestApp } from '../helper.js';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test-artifacts');

/**
 * Whether the browser tests can run here. Under CI=true a missing browser is a failure (the suite
 * must not go green without them), elsewhere the browser files are skipped with a visible reason.
 */
export function browserAvailable(): boolean {
  const present = existsSync(CHROMIUM);
  if (!present && process.env.CI === 'true') throw new Error(`CI=true but ${CHROMIUM} is missing: install Debian's chromium`);
  return present;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

let built: Promise<unknown> | null = null;
/** Builds the widget from the current sources once per test process (the bundle under test is never stale). */
export function buildOnce(): Promise<unknown> {
  built ??= buildWidget();
  return built;
}

export interface Stack {
  t: TestApp;
  /** http://127.0.0.1:<port> of the AnswerDesk server. */
  apiOrigin: string;
  /** http://localhost:<port> of the host page server: another origin, as on a customer's site. */
  hostOrigin: string;
  /** Registers a host page and returns its URL. */
  page(name: string, html: string): string;
  close(): Promise<void>;
}

/** The real server on a free port plus a second HTTP server, on another origin, serving host pages. */
export async function startStack(dialect: DialectCase, env: Record<string, string> = {}): Promise<Stack> {
  await buildOnce();
  const t = await createTestApp({ dialect, env });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const apiOrigin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0].slice(1);
    const html = pages.get(name);
    if (!html) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hostOrigin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    t,
    apiOrigin,
    hostOrigin,
    page(name, html) {
      pages.set(name, html);
      return `${hostOrigin}/${name}`;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

export interface HostPageOptions {
  apiOrigin: string;
  apiKey: string;
  user?: { id: string; email?: string; name?: string; hmac?: string };
  /** Extra markup in <head> (hostile CSS) and in <body>. */
  head?: string;
  body?: string;
}

/** A customer's page: some content, the script tag and the initAsync call of docs/widget.md. */
export function hostPage(options: HostPageOptions): string {
  const init = { apiUrl: `${options.apiOrigin}/api/v1`, apiKey: options.apiKey, ...(options.user ? { user: options.user } : {}) };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme Billing Help</title>
<meta name="description" content="How to pay invoices and change plans at Acme.">
${options.head ?? ''}
</head><body>
<h1>Billing help</h1>
<h2>Changing your plan</h2>
<p>Plans can be changed at any time. <a href="https://acme.example/pricing">See pricing</a></p>
<button type="button">Upgrade now</button>
<form><label for="email">Work e-mail</label><input id="email" name="email" type="email" placeholder="you@company.com" value="private@secret.example">
<label for="pw">Password</label><input id="pw" name="pw" type="password" value="hunter2-secret"></form>
${options.body ?? ''}
<script src="${options.apiOrigin}/widget.js"></script>
<script>
  window.widgetEvents = [];
  ['ready','open','close','conversation:start','conversation:end','message:sent','message:received','feedback','identify','reset','error'].forEach(function (name) {
    AnswerDesk.on(name, function (payload) { window.widgetEvents.push({ name: name, payload: payload }); });
  });
  window.widgetReady = AnswerDesk.initAsync(${JSON.stringify(init).replace(/</g, '\\u003c')});
</script>
</body></html>`;
}

/** Opens a host page and waits until initAsync has resolved. */
export async function openHostPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { widgetReady?: Promise<void> }).widgetReady !== undefined);
  await page.evaluate(() => (window as unknown as { widgetReady: Promise<void> }).widgetReady);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `widget-${name}.png`) });
}

/** Adds a knowledge source through the admin API and waits until it is searchable. */
export async function addKnowledge(t: TestApp, projectId: string, body: Record<string, unknown>): Promise<string> {
  const created = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge`, headers: adminAuth(), payload: body });
  if (created.statusCode !== 201) throw new Error(`knowledge source not created: ${created.statusCode} ${created.body}`);
  const id = (created.json() as { source: { id: string } }).source.id;
  for (let i = 0; i < 400; i++) {
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/knowledge/${id}`, headers: adminAuth() });
    const status = (got.json() as { source: { status: string; error: string | null } }).source;
    if (status.status === 'ready') return id;
    if (status.status === 'failed') throw new Error(`knowledge source failed: ${status.error}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('knowledge source never became ready');
}

/** Text of the last assistant message once its stream has ended (complete, error or stopped). */
export async function lastAnswer(page: Page): Promise<{ status: string; text: string; messageId: string | null }> {
  const answer = page.locator('answerdesk-widget li.msg.assistant').last();
  await answer.and(page.locator('[data-status="complete"], [data-status="error"], [data-status="stopped"]')).waitFor();
  return {
    status: (await answer.getAttribute('data-status')) ?? '',
    text: (await answer.locator('.bubble').textContent()) ?? '',
    messageId: await answer.getAttribute('data-message-id'),
  };
}

/** Opens the panel with the launcher and sends `text` through the composer. */
export async function ask(page: Page, text: string): Promise<void> {
  const panel = page.locator('answerdesk-widget .panel');
  if (!(await panel.isVisible())) await page.locator('answerdesk-widget .launcher').click();
  const before = await page.locator('answerdesk-widget li.msg.assistant').count();
  await page.locator('answerdesk-widget textarea#ad-input').fill(text);
  await page.locator('answerdesk-widget textarea#ad-input').press('Enter');
  await page.locator('answerdesk-widget li.msg.assistant').nth(before).waitFor();
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2 A/AA and best-practice rules) on the widget alone, as it is now (the host
 * page is not the widget's business), and fails on any serious or critical violation, listing them.
 */
export async function expectWidgetAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    type Violation = { id: string; impact: string | null; nodes: Array<{ target: unknown[] }> };
    const axe = (window as unknown as { axe: { run(ctx: unknown, options: unknown): Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run(
      { include: [['answerdesk-widget']] },
      { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } },
    );
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), `axe on ${what}`).toEqual([]);
}
