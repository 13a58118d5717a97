import { gunzipSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWidget, MAX_GZIP_BYTES, WIDGET_BUNDLE, type WidgetBuild } from '../../widget/build.js';
import { createTestApp, type TestApp } from '../helper.js';

/** The bundle's size budget and how GET /widget.js serves it (no browser needed). */
describe('GET /widget.js', () => {
  let t: TestApp;
  let built: WidgetBuild;

  beforeAll(async () => {
    built = await buildWidget();
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('stays within the 35 KB gzip budget', () => {
    expect(built.file).toBe(WIDGET_BUNDLE);
    expect(built.gzipBytes).toBeGreaterThan(0);
    expect(built.gzipBytes).toBeLessThanOrEqual(MAX_GZIP_BYTES);
  });

  it('serves the built bundle without a key, with cache headers, gzip and 304 revalidation', async () => {
    const bytes = await readFile(WIDGET_BUNDLE);
    const plain = await t.app.inject({ method: 'GET', url: '/widget.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=300, stale-while-revalidate=86400');
    expect(plain.headers['vary']).toBe('Accept-Encoding');
    expect(plain.rawPayload.equals(bytes)).toBe(true);
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]{32}"$/);

    const gz = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(bytes)).toBe(true);
    expect(gz.rawPayload.length).toBeLessThanOrEqual(MAX_GZIP_BYTES);
    expect(gz.headers.etag).not.toBe(etag);

    for (const tag of [etag, gz.headers.etag as string, `W/${etag}`, `"nope", ${etag}`]) {
      const again = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': tag } });
      expect(again.statusCode).toBe(304);
      expect(again.rawPayload.length).toBe(0);
    }
    const changed = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
    const refused = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'gzip;q=0' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });
});
