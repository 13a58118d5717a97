import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEndpoints } from '../lib/local-endpoints.js';
import { isPublicAddress, safeFetch, SafeFetchError, type AddressPolicy } from './safe-fetch.js';

let server: Server;
let base: string;
let port: number;
const seen: Array<{ method: string; url: string; authorization?: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    const redirect = (to: string, status = 302) => {
      res.writeHead(status, { location: to });
      res.end();
    };
    switch (req.url) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' });
        return res.end('hello');
      case '/hop':
        return redirect('/ok');
      case '/see-other':
        return redirect('/ok', 303);
      case '/to-metadata':
        return redirect('http://169.254.169.254/latest/meta-data/');
      case '/to-loopback-alias':
        return redirect(`http://127.0.0.2:${port}/ok`);
      case '/to-ipv6-loopback':
        return redirect(`http://[::1]:${port}/ok`);
      case '/to-mapped':
        return redirect(`http://[::ffff:127.0.0.1]:${port}/ok`);
      case '/to-file':
        return redirect('file:///etc/passwd');
      case '/loop':
        return redirect('/loop');
      case '/slow':
        res.writeHead(200);
        res.write('partial');
        return; // never ends: only the timeout can finish this request
      case '/big':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.alloc(1_000_000, 0x61));
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const guardOn = { timeoutMs: 5000, maxBytes: 1 << 20, allowPrivateNetwork: false } as const;
const guardOff = { ...guardOn, allowPrivateNetwork: true } as const;
/**
 * The test server can only live on loopback, which the guard refuses. To have an allowed first hop
 * with the guard on, tests let exactly 127.0.0.1 through and keep the real rule for every other
 * address (so 127.0.0.2, ::1, metadata and mapped forms stay refused).
 */
const onlyTestServer: AddressPolicy = (a) => a === '127.0.0.1' || isPublicAddress(a);

async function refusal(promise: Promise<unknown>): Promise<SafeFetchError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SafeFetchError);
  return err as SafeFetchError;
}

describe('safeFetch', () => {
  it('refuses loopback with the guard on, and fetches it with the guard off', async () => {
    expect((await refusal(safeFetch(`${base}/ok`, guardOn))).code).toBe('blocked_address');
    expect((await refusal(safeFetch(`http://localhost:${port}/ok`, guardOn))).code).toBe('blocked_address');
    const res = await safeFetch(`${base}/ok`, guardOff);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('hello');
    expect(res.headers.get('x-test')).toBe('yes');
    expect(res.truncated).toBe(false);
    expect(res.url).toBe(`${base}/ok`);
  });

  it('follows an allowed redirect and reports the hops', async () => {
    const res = await safeFetch(`${base}/hop`, { ...guardOn, addressPolicy: onlyTestServer });
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${base}/ok`);
    expect(res.redirects).toEqual([`${base}/ok`]);
  });

  it.each(['/to-metadata', '/to-loopback-alias', '/to-ipv6-loopback', '/to-mapped'])(
    'refuses a redirect from an allowed URL to a private address (%s)',
    async (path) => {
      const before = seen.length;
      const err = await refusal(safeFetch(`${base}${path}`, { ...guardOn, addressPolicy: onlyTestServer }));
      expect(err.code).toBe('blocked_address');
      // Only the first hop reached a server: the private target was never contacted.
      expect(seen.slice(before).map((s) => s.url)).toEqual([path]);
    },
  );

  it('checks the address again at connect time (a DNS answer that changes after the check)', async () => {
    let calls = 0;
    // Allows the pre-flight check, refuses the lookup made by the connection itself, as a
    // rebinding DNS server would answer a public address first and a private one next.
    const rebinding: AddressPolicy = () => ++calls === 1;
    const err = await refusal(safeFetch(`http://localhost:${port}/ok`, { ...guardOn, addressPolicy: rebinding }));
    expect(err.code).toBe('blocked_address');
    expect(calls).toBeGreaterThan(1);
  });

  it('refuses non-http schemes, also as a redirect target', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'data:text/plain,hi', 'gopher://x/']) {
      expect((await refusal(safeFetch(url, guardOff))).code).toBe('unsupported_scheme');
    }
    expect((await refusal(safeFetch(`${base}/to-file`, guardOff))).code).toBe('unsupported_scheme');
    expect((await refusal(safeFetch('not a url', guardOff))).code).toBe('invalid_url');
  });

  it('stops after maxRedirects', async () => {
    const err = await refusal(safeFetch(`${base}/loop`, { ...guardOff, maxRedirects: 3 }));
    expect(err.code).toBe('too_many_redirects');
  });

  it('turns a POST into a GET on 303', async () => {
    const before = seen.length;
    const res = await safeFetch(`${base}/see-other`, {
      ...guardOff,
      method: 'POST',
      body: 'x=1',
      headers: { authorization: 'Bearer t' },
    });
    expect(res.status).toBe(200);
    expect(seen.slice(before).map((s) => s.method)).toEqual(['POST', 'GET']);
  });

  it('gives up when the time budget is spent', async () => {
    const err = await refusal(safeFetch(`${base}/slow`, { ...guardOff, timeoutMs: 300 }));
    expect(err.code).toBe('timeout');
  });

  it('reads at most maxBytes and says the body was truncated', async () => {
    const capped = await safeFetch(`${base}/big`, { ...guardOff, maxBytes: 1000 });
    expect(capped.body.length).toBe(1000);
    expect(capped.truncated).toBe(true);
    const whole = await safeFetch(`${base}/big`, { ...guardOff, maxBytes: 1_000_000 });
    expect(whole.body.length).toBe(1_000_000);
    expect(whole.truncated).toBe(false);
  });
});

describe('isPublicAddress', () => {
  it.each([
    '10.0.0.1', '172.16.5.4', '192.168.1.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.251', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254',
    'ff02::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '64:ff9b::7f00:1',
  ])('refuses %s', (a) => expect(isPublicAddress(a)).toBe(false));

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (a) =>
    expect(isPublicAddress(a)).toBe(true),
  );
});

describe("this server's own endpoints (the demo's order look-up)", () => {
  const init = { timeoutMs: 2000, maxBytes: 1024, allowPrivateNetwork: false };

  it('reaches an allowed loopback endpoint, and nothing else on that origin or any other', async () => {
    const local = new LocalEndpoints();
    local.allow(base, /^\/ok$/);
    const res = await safeFetch(`${base}/ok`, { ...init, localEndpoints: local });
    expect(res.body.toString()).toBe('hello');
    // Another path of the same origin, another loopback port, credentials in the URL: refused.
    await expect(safeFetch(`${base}/big`, { ...init, localEndpoints: local })).rejects.toMatchObject({ code: 'blocked_address' });
    await expect(safeFetch(`http://127.0.0.1:${port + 1}/ok`, { ...init, localEndpoints: local })).rejects.toMatchObject({ code: 'blocked_address' });
    await expect(safeFetch(`http://user:pw@127.0.0.1:${port}/ok`, { ...init, localEndpoints: local })).rejects.toMatchObject({ code: 'blocked_address' });
  });

  it('checks every redirect hop again: an allowed endpoint cannot bounce a call elsewhere', async () => {
    const local = new LocalEndpoints();
    local.allow(base, /^\/(hop|to-loopback-alias)$/);
    // /hop redirects to /ok on the same origin, which is not allowed.
    await expect(safeFetch(`${base}/hop`, { ...init, localEndpoints: local })).rejects.toMatchObject({ code: 'blocked_address' });
    await expect(safeFetch(`${base}/to-loopback-alias`, { ...init, localEndpoints: local })).rejects.toBeInstanceOf(SafeFetchError);
  });
});
