import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../test/fakes/tcp-proxy.js';
import { auth, createProject, createTestApp, limiterKinds, type TestApp } from '../../test/helper.js';
import { waitFor } from '../../test/wait.js';

const FALLBACK_WARNING = "Redis unavailable: rate limits are counted in this node's memory until it answers";

const redis = limiterKinds.find((k) => k.name === 'redis');

// Needs TEST_REDIS_URL; under CI=true the global setup makes sure it is set.
describe.skipIf(!redis)('rate limits while Redis is unavailable', () => {
  const kind = redis!;
  let proxy: TcpProxy;
  let t: TestApp;
  let lines: string[];

  beforeEach(async () => {
    const target = new URL(kind.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    lines = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) });
    t = await createTestApp({
      redisUrl: proxy.via(kind.url!),
      env: { LOG_LEVEL: 'info', REDIS_CONNECT_TIMEOUT_MS: '300', REDIS_COMMAND_TIMEOUT_MS: '300' },
      logger: { stream },
    });
  });
  afterEach(async () => {
    proxy.setMode('forward');
    await t.close();
    await proxy.close();
  });

  const logged = (msg: string) => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === msg);
  const ready = () => t.app.inject({ method: 'GET', url: '/ready' });

  function expectCounted(res: LightMyRequestResponse, limit: number, remaining: number) {
    expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
    expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  }

  it.each([
    ['refuses connections', 'refuse'],
    ['goes silent (packets dropped)', 'silent'],
  ] as const)(
    'keeps serving and limiting from memory, warns once and reports Redis down on /ready when Redis %s, then shares counts again',
    async (_name, mode) => {
      const p = await createProject(t);
      const create = () => t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
      expect((await create()).statusCode).toBe(201);
      expect((await ready()).statusCode).toBe(200);

      proxy.setMode(mode);
      // The session bucket allows 10 a minute; during the outage this node counts from zero in memory.
      for (let i = 0; i < 10; i++) {
        const res = await create();
        expect(res.statusCode).toBe(201);
        expectCounted(res, 10, 9 - i);
      }
      const limited = await create();
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: 'Rate limit exceeded' });
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
      const down = await ready();
      expect(down.statusCode).toBe(503);
      expect(down.json()).toEqual({ status: 'unavailable', database: 'ok', redis: 'error' });
      await waitFor(() => logged(FALLBACK_WARNING).length > 0);
      expect(logged(FALLBACK_WARNING)).toHaveLength(1);
      expect(logged(FALLBACK_WARNING)[0].level).toBe(40);

      proxy.setMode('forward');
      await waitFor(async () => (await ready()).statusCode === 200);
      await waitFor(() => logged('Redis answers again: rate limits are shared by all nodes again').length === 1);
      // Counted in Redis again: the count there continues from before the outage.
      expectCounted(await create(), 10, 8);
    },
  );

  // Redis is shared by every node: a health check that failed with it would take all of them out of
  // the proxy at once, turning the fail-open outage above into a full one.
  it('keeps passing the health check the compose proxy uses while Redis is down', async () => {
    const caddyfile = readFileSync(resolve(import.meta.dirname, '../../deploy/Caddyfile'), 'utf8');
    const healthUri = /^\s*health_uri\s+(\S+)\s*$/m.exec(caddyfile)?.[1];
    expect(healthUri).toBeDefined();
    const check = () => t.app.inject({ method: 'GET', url: healthUri! });
    expect((await check()).statusCode).toBe(200);
    proxy.setMode('refuse');
    expect((await ready()).statusCode).toBe(503);
    expect((await check()).statusCode).toBe(200);
  });
});
