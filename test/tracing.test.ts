import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from './fakes/action-endpoint.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from './fakes/openai-compatible.js';
import { ADMIN_TOKEN, createTestApp } from './helper.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { waitFor } from './wait.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** An OTLP/HTTP collector on a local port: takes `POST /v1/traces` in the JSON encoding and keeps every span. */
async function startCollector(): Promise<{ endpoint: string; spans: OtlpSpan[]; bodies: string[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(400).end();
        return;
      }
      bodies.push(body);
      const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const rs of parsed.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  const USER_TOKEN = 'user-session-token-7c1e55';
  const QUESTION = 'Where is my order A-9876?';
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let fake: FakeOpenAICompatible;
  let ep: ActionEndpoint;
  let server: ServerProcess;
  let dir: string;

  beforeAll(async () => {
    collector = await startCollector();
    fake = await startFakeOpenAICompatible();
    ep = await startActionEndpoint();
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-tracing-'));
    server = await startServerProcess({
      DATABASE_URL: `sqlite:${join(dir, 'answerdesk.db')}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_SERVICE_NAME: 'answerdesk-test',
      OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
      ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true',
    });
  }, 90_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await collector?.close();
    await fake?.close();
    await ep?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports one span per request with the model call, the tool call and database time beneath it, and no content', async () => {
    const call = (path: string, key: string, body?: unknown) =>
      fetch(`${server.base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await call('/api/v1/admin/projects', ADMIN_TOKEN, { name: 'Traced', settings: { model: 'openai-compatible:fake' } });
    const { project, publicKey } = (await created.json()) as { project: { id: string }; publicKey: string };
    const action = await call(`/api/v1/admin/projects/${project.id}/actions`, ADMIN_TOKEN, {
      name: 'track_order',
      description: 'Look up where an order is.',
      url: `${ep.base}/orders/{orderNumber}`,
      parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
    });
    expect(action.status).toBe(201);
    const conv = await call('/api/v1/chat/conversations', publicKey, {});
    const { conversationId } = (await conv.json()) as { conversationId: string };
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-9876' } }] }, { text: 'Your order A-9876 has shipped.' });
    const res = await call('/api/v1/chat/messages', publicKey, { conversationId, messages: [{ role: 'user', content: QUESTION }], userTokens: { 'X-Customer-Token': USER_TOKEN } });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    await res.text();
    await fetch(`${server.base}/health`);

    // The batch goes out within a second or two; a drain flushes whatever is left.
    const root = await waitFor(
      () => collector.spans.find((s) => s.name === 'POST /api/v1/chat/messages' && attr(s, 'answerdesk.request_id') === requestId),
      15_000,
      'the send-message span',
    );
    expect(root.kind).toBe(2); // SERVER
    expect(root.parentSpanId ?? '').toBe('');
    expect(attr(root, 'http.route')).toBe('/api/v1/chat/messages');
    expect(Number(attr(root, 'http.response.status_code'))).toBe(200);

    const descendants = (id: string): OtlpSpan[] => {
      const children = collector.spans.filter((s) => s.traceId === root.traceId && s.parentSpanId === id);
      return children.flatMap((c) => [c, ...descendants(c.spanId)]);
    };
    await waitFor(() => descendants(root.spanId).some((s) => s.name === 'ai.toolCall'), 15_000, 'the tool-call span');
    const below = descendants(root.spanId);
    const names = new Set(below.map((s) => s.name));
    expect(names).toContain('ai.streamText');
    expect(names).toContain('ai.streamText.doStream');
    expect(names).toContain('ai.toolCall');
    const db = below.filter((s) => s.name.startsWith('db '));
    expect(db.length).toBeGreaterThan(3);
    expect(db.map((s) => attr(s, 'db.operation.name'))).toEqual(expect.arrayContaining(['select', 'insert']));
    // The model spans say which model and how many tokens, under the request's trace.
    expect(below.find((s) => s.name === 'ai.streamText.doStream' && attr(s, 'ai.model.id') !== undefined)).toBeDefined();

    // Probes are not traced; nothing users wrote or sent (question, order number, user token) is in any span.
    expect(collector.spans.some((s) => attr(s, 'url.path') === '/health')).toBe(false);
    const exported = collector.bodies.join('\n');
    for (const secret of [QUESTION, 'A-9876', USER_TOKEN, publicKey, ADMIN_TOKEN]) expect(exported).not.toContain(secret);
    expect(exported).toContain('answerdesk-test');
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('has no tracer, so no span is made and nothing is sent', async () => {
    const t = await createTestApp();
    try {
      expect(t.deps.tracing).toBeNull();
      expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
