import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helper.js';

describe('OpenAPI document and reference', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves a valid OpenAPI 3.1 document without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    // A standard validator: checks the document against the OpenAPI 3.1 schema and resolves every $ref.
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('documents the runtime endpoints from the same zod schemas that validate them', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const list = doc.paths['/api/v1/chat/conversations'];
    expect(list.post).toBeDefined();
    const query = list.get.parameters.find((p: { name: string }) => p.name === 'userId');
    expect(query).toMatchObject({ in: 'query', required: true, schema: { minLength: 1 } });
    expect(doc.paths['/api/v1/chat/conversations/{conversationId}'].get).toBeDefined();
    // Internal routes (health, the document itself) stay out of the public contract.
    expect(doc.paths['/health']).toBeUndefined();
  });

  it('serves the interactive reference from local files (no CDN)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const srcs = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThan(0);
    for (const src of srcs) expect(src).not.toMatch(/^(https?:)?\/\//);
    const script = srcs.find((s) => s.endsWith('.js'))!;
    const asset = await t.app.inject({ method: 'GET', url: new URL(script, 'http://x/docs/').pathname });
    expect(asset.statusCode).toBe(200);
  });
});

describe('health and readiness', () => {
  it('answers /health and /ready without a key, and /ready reports the database', async () => {
    const t = await createTestApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', database: 'ok', redis: 'disabled' });
      await t.deps.store.close();
      const down = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ status: 'unavailable', database: 'error' });
    } finally {
      await t.app.close();
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)('reports Redis when the limiter uses it', async () => {
    const t = await createTestApp({ redisUrl: process.env.TEST_REDIS_URL });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready', database: 'ok', redis: 'ok' });
      await t.deps.limiter.close();
      const down = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ redis: 'error' });
    } finally {
      await t.app.close();
      await t.deps.store.close();
    }
  });
});
