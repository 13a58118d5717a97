import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, DASHBOARD_DIR, DashboardTooLargeError, firstLoadFiles, MAX_FIRST_LOAD_GZIP_BYTES } from '../../../dashboard/build.js';
import { buildOnce } from '../../../test/dashboard/browser.js';
import { createTestApp, type TestApp } from '../../../test/helper.js';

/** The dashboard's files as the server hands them out: caching, CSP, client-side routes, the budget. */
describe('serving the dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    await buildOnce();
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('redirects / to /dashboard/', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/dashboard/');
  });

  it('answers every client-side route with index.html, not cached, under a strict CSP', async () => {
    for (const url of ['/dashboard', '/dashboard/', '/dashboard/login', '/dashboard/p/proj_x/knowledge', '/dashboard/setup?token=abc']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<div id="root"></div>');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('serves hashed assets as immutable for a year, gzipped when asked, and 404s a missing one', async () => {
    const index = (await t.app.inject({ method: 'GET', url: '/dashboard/' })).body;
    const assets = firstLoadFiles(index);
    expect(assets.some((a) => /^\/dashboard\/assets\/.+-[\w-]{8,}\.js$/.test(a))).toBe(true);
    for (const asset of assets) {
      const plain = await t.app.inject({ method: 'GET', url: asset });
      expect(plain.statusCode, asset).toBe(200);
      expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(String(plain.headers['content-type'])).toMatch(/^(text\/javascript|text\/css)/);
      const zipped = await t.app.inject({ method: 'GET', url: asset, headers: { 'accept-encoding': 'gzip, br' } });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(zipped.rawPayload).equals(plain.rawPayload)).toBe(true);
    }
    const missing = await t.app.inject({ method: 'GET', url: '/dashboard/assets/nothing-12345678.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).not.toContain('<div id="root">');
  });

  it('never serves a file from outside the build', async () => {
    for (const url of ['/dashboard/../package.json', '/dashboard/%2e%2e/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard/assets/..%2f..%2f..%2f.gitignore']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.body, url).not.toContain('"name": "answerdesk"');
      expect(res.body, url).not.toContain('node_modules');
    }
  });

  it('serves the widget preview page framable by the dashboard only', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/dashboard/preview.html' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toContain('/widget.js');
    expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'self'");
  });

  it('keeps the first load (JS + CSS, gzipped) under the 250 KB budget', async () => {
    const index = await readFile(path.join(DASHBOARD_DIR, 'index.html'), 'utf8');
    let total = 0;
    for (const file of firstLoadFiles(index)) total += gzipSync(await readFile(path.join(DASHBOARD_DIR, file.replace('/dashboard/', ''))), { level: 9 }).length;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(MAX_FIRST_LOAD_GZIP_BYTES);
  });

  it('fails the build above the budget and leaves the previous build in place', async () => {
    const dir = await mkdtemp(path.join(path.dirname(DASHBOARD_DIR), 'budget-'));
    const out = path.join(dir, 'dashboard');
    try {
      await buildDashboard(out);
      await writeFile(path.join(out, 'marker.txt'), 'previous build');
      await expect(buildDashboard(out, 10 * 1024)).rejects.toThrow(DashboardTooLargeError);
      await expect(buildDashboard(out, 10 * 1024)).rejects.toThrow(/above the 10\.0 KB budget: assets\/main-/);
      expect(await readFile(path.join(out, 'marker.txt'), 'utf8')).toBe('previous build');
      expect(existsSync(path.join(out, 'index.html'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
