import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import type { CreatedProject } from '../projects/projects.js';

/**
 * The client address that rate limits count by: `X-Forwarded-For` is read from the right, past the
 * hops `TRUST_PROXY` names, so what a client writes into the header itself (on the left) changes
 * nothing.
 */
describe.each(dialects)('client address behind proxies on $name', (dialect) => {
  const spoofed = (i: number) => `198.18.${i >> 8}.${i & 255}`;

  /** 70 calls that spoof a new left-most address each time, as a client can; returns their statuses. */
  async function spoofSeventy(t: TestApp, key: string, xff: (spoof: string) => string, remoteAddress = '127.0.0.1') {
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/widget/config',
        remoteAddress,
        headers: auth(key, { 'x-forwarded-for': xff(spoofed(i)) }),
      });
      statuses.push(res.statusCode);
    }
    return { ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length };
  }

  const remaining = async (t: TestApp, key: string | null, xff: string, url = '/api/v1/widget/config', remoteAddress = '127.0.0.1') => {
    const res = await t.app.inject({ method: 'GET', url, remoteAddress, headers: { ...(key ? auth(key) : {}), 'x-forwarded-for': xff } });
    return Number(res.headers['x-ratelimit-remaining']);
  };

  describe('TRUST_PROXY=1 (one load balancer)', () => {
    let t: TestApp;
    let p: CreatedProject;
    beforeAll(async () => {
      t = await createTestApp({ dialect, env: { TRUST_PROXY: '1' } });
    });
    // Each test its own project(s): none sees another's rows or rate-limit counts.
    beforeEach(async () => {
      p = await createProject(t);
    });
    afterAll(() => t.close());

    it('holds the 60/min limit against 70 calls with spoofed left-most addresses', async () => {
      // The balancer appends the address it saw (203.0.113.7) to whatever the client sent.
      expect(await spoofSeventy(t, p.publicKey, (spoof) => `${spoof}, 203.0.113.7`)).toEqual({ ok: 60, limited: 10 });
      // Another client behind the same balancer has its own count, whatever it writes on the left.
      expect(await remaining(t, p.publicKey, `${spoofed(1)}, 203.0.113.8`)).toBe(59);
      expect(await remaining(t, p.publicKey, `${spoofed(2)}, 203.0.113.8`)).toBe(58);
    });

    it('takes the right-most address, the one the trusted hop appended', async () => {
      const q = await createProject(t, { rateLimits: { general: 5 } });
      expect(await remaining(t, q.publicKey, '192.0.2.1')).toBe(4);
      expect(await remaining(t, q.publicKey, '192.0.2.99, 192.0.2.1')).toBe(3);
      expect(await remaining(t, q.publicKey, '192.0.2.1, 192.0.2.2')).toBe(4);
    });
  });

  describe('TRUST_PROXY as a list of proxy addresses and CIDRs', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ dialect, env: { TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' } });
    });
    afterAll(() => t.close());

    it('skips every trusted hop from the right and counts by the first untrusted address', async () => {
      const p = await createProject(t);
      // Client 203.0.113.9 → proxy 10.0.0.5 → proxy 127.0.0.1 (the socket).
      expect(await spoofSeventy(t, p.publicKey, (spoof) => `${spoof}, 203.0.113.9, 10.0.0.5`)).toEqual({ ok: 60, limited: 10 });

      const q = await createProject(t, { rateLimits: { general: 5 } });
      expect(await remaining(t, q.publicKey, '203.0.113.9, 10.0.0.5')).toBe(4);
      expect(await remaining(t, q.publicKey, '10.9.9.9, 203.0.113.9, 10.200.0.1, 10.0.0.5')).toBe(3);
      expect(await remaining(t, q.publicKey, '203.0.113.10, 10.0.0.5')).toBe(4);
    });

    it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
      const q = await createProject(t, { rateLimits: { general: 5 } });
      const direct = (xff: string) => remaining(t, q.publicKey, xff, '/api/v1/widget/config', '192.0.2.50');
      expect(await direct('203.0.113.20')).toBe(4);
      expect(await direct('203.0.113.21')).toBe(3);
      expect(await direct('10.0.0.1, 203.0.113.22')).toBe(2);
    });

    it('counts calls on paths no route can read by the same client address', async () => {
      expect(await remaining(t, null, '203.0.113.30', '/api/v1/%zz')).toBe(59);
      expect(await remaining(t, null, '198.51.100.1, 203.0.113.30', '/api/v1/%zz')).toBe(58);
      expect(await remaining(t, null, '203.0.113.31', '/api/v1/%zz')).toBe(59);
    });
  });

  describe('without TRUST_PROXY', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ dialect });
    });
    afterAll(() => t.close());

    it('counts by the socket address and never reads X-Forwarded-For', async () => {
      const p = await createProject(t);
      expect(await spoofSeventy(t, p.publicKey, (spoof) => spoof)).toEqual({ ok: 60, limited: 10 });
    });
  });
});
