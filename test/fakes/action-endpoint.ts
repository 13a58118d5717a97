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
