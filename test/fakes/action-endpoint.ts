import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the endpoint received it: raw path and query, headers, body bytes as text. */
export interface ReceivedRequest {
  method: string;
  /** Path and query exactly as sent on the request line (nothing decoded). */
  rawUrl: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ActionEndpoint {
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
  received: ReceivedRequest[];
  /** Received requests whose path starts with `prefix`. */
  receivedAt(prefix: string): ReceivedRequest[];
  close(): Promise<void>;
}

/** JSON text with every `/` escaped as `\/`, as PHP's json_encode writes it by default. */
export const phpJson = (value: unknown) => JSON.stringify(value).replace(/\//g, '\\/');

/**
 * JSON text with every character but ASCII letters and digits written as a `\uXXXX` escape (upper-case
 * hex), so escaped and literal characters alternate inside one value: what a strict-ASCII encoder
 * (or a hand-rolled one) produces.
 */
export const unicodeJson = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => v).replace(/"((?:[^"\\]|\\.)*)"/g, (_m, inner: string) => {
    const text = JSON.parse(`"${inner}"`) as string;
    return `"${[...text].map((c) => (/[A-Za-z0-9]/.test(c) ? c : c.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(''))).join('')}"`;
  });

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/**
 * The ways `/echo-as/<form>` writes the request's headers back: each is a real endpoint's habit, and
 * each hides a header value from a search for its raw or `JSON.stringify` form.
 */
export const ECHO_FORMS = {
  /** PHP's json_encode: `/` as `\/`. */
  'php-json': { contentType: 'application/json', render: (h: Record<string, string>) => phpJson({ headers: h }) },
  /** Every non-alphanumeric character as `\uXXXX`. */
  'unicode-json': { contentType: 'application/json; charset=utf-8', render: (h: Record<string, string>) => unicodeJson({ headers: h }) },
  /** `name: <percent-encoded value>` lines. */
  'url-text': { contentType: 'text/plain', render: (h: Record<string, string>) => Object.entries(h).map(([k, v]) => `${k}: ${encodeURIComponent(v)}`).join('\n') },
  /** A form-encoded body (spaces as `+`). */
  form: { contentType: 'application/x-www-form-urlencoded', render: (h: Record<string, string>) => new URLSearchParams(h).toString() },
  /** Each value base64-encoded (standard alphabet, padded). */
  base64: { contentType: 'application/json', render: (h: Record<string, string>) => JSON.stringify(Object.fromEntries(Object.entries(h).map(([k, v]) => [k, b64(v)]))) },
  /** Each value base64url-encoded (no padding), PHP-escaped on top. */
  base64url: { contentType: 'application/json', render: (h: Record<string, string>) => phpJson(Object.fromEntries(Object.entries(h).map(([k, v]) => [k, b64url(v)]))) },
  /** Each value inside a Basic credential (`base64("echo:" + value)`), so its base64 does not start on a 3-byte boundary. */
  basic: { contentType: 'application/json', render: (h: Record<string, string>) => JSON.stringify(Object.fromEntries(Object.entries(h).map(([k, v]) => [k, `Basic ${b64(`echo:${v}`)}`]))) },
  /** The headers as JSON text inside a JSON string (a log line or an upstream's body relayed as is), PHP-escaped. */
  nested: { contentType: 'application/json', render: (h: Record<string, string>) => phpJson({ upstream: JSON.stringify({ headers: h }) }) },
} satisfies Record<string, { contentType: string; render(headers: Record<string, string>): string }>;
export type EchoForm = keyof typeof ECHO_FORMS;

/** Every text `/echo-as/*` could write for `value`: none of them may reach a client, a row or a log. */
export function echoedForms(value: string): string[] {
  const inner = (text: string) => text.slice(1, -1);
  return [
    value,
    inner(JSON.stringify(value)),
    inner(phpJson(value)),
    inner(unicodeJson(value)),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    b64(value),
    b64url(value),
    // The part of the Basic credential's base64 that encodes the value alone.
    b64(`echo:${value}`).slice(8, -4),
  ];
}

/**
 * A company's HTTP endpoints, for action tests: a real server on port 0 that records every request
 * and answers by path:
 * - `/orders/<id>` → 200 JSON order (404 JSON when the id is `missing`)
 * - `/echo…` → 200 JSON echo of method, raw URL, headers and body
 * - `/status/<code>` → that status with a JSON error body
 * - `/slow` → answers after 3 s
 * - `/big` → 2 MiB of JSON text
 * - `/text` → plain text with messy spacing
 * - `/redirect?to=<url>` → 302 to `to`
 * - `/echo-as/<form>` → the request headers echoed in one of the {@link ECHO_FORMS}
 * - `/respond?type=<content type>&body=<text>` → 200 with exactly that body
 */
export async function startActionEndpoint(): Promise<ActionEndpoint> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawUrl = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? 'GET', rawUrl, headers: req.headers, body });
      const url = new URL(rawUrl, 'http://endpoint.test');
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(value));
      };
      const order = /^\/orders\/([^/]+)$/.exec(url.pathname);
      if (order) {
        const id = decodeURIComponent(order[1]!);
        if (id === 'missing') return json(404, { error: 'Order not found' });
        return json(200, { id, status: 'shipped', carrier: 'DHL', eta: '2025-03-14', items: [{ sku: 'MUG-1', qty: 2 }] });
      }
      const echoAs = /^\/echo-as\/([\w-]+)$/.exec(url.pathname);
      if (echoAs) {
        const form = ECHO_FORMS[echoAs[1] as EchoForm];
        if (!form) return json(404, { error: 'no such form' });
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        res.writeHead(200, { 'content-type': form.contentType });
        res.end(form.render(headers));
        return;
      }
      if (url.pathname === '/respond') {
        res.writeHead(200, { 'content-type': url.searchParams.get('type') ?? 'text/plain' });
        res.end(url.searchParams.get('body') ?? '');
        return;
      }
      if (url.pathname.startsWith('/echo')) return json(200, { method: req.method, rawUrl, headers: req.headers, body });
      const status = /^\/status\/(\d{3})$/.exec(url.pathname);
      if (status) return json(Number(status[1]), { error: `failure ${status[1]}` });
      if (url.pathname === '/slow') {
        const timer = setTimeout(() => json(200, { late: true }), 3000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: 'x'.repeat(2 * 1024 * 1024) }));
        return;
      }
      if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('  Invoice   INV-7   was   resent.\n\n\n\nThank you.  ');
        return;
      }
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/echo' });
        res.end();
        return;
      }
      json(404, { error: 'no such route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    received,
    receivedAt: (prefix) => received.filter((r) => r.rawUrl.startsWith(prefix)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
