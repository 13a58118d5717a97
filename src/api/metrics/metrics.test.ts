import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../../test/fakes/action-endpoint.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { parseAnswer } from '../../../test/ui-stream.js';
import { loadConfig } from '../../config.js';
import { startWebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import { waitFor } from '../../../test/wait.js';
import { serveMetrics } from '../../lib/metrics.js';
import { unsettledDeliveryCount } from '../../webhooks/deliveries.js';
import { startWebhookWorker, type WebhookWorker } from '../../webhooks/worker.js';
import { webhookDeps } from '../webhooks/service.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The value of one series in a Prometheus text exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe.each(dialects)('GET /metrics on $name', (dialect) => {
  let t: TestApp;
  let fake: FakeOpenAICompatible;
  let ep: ActionEndpoint;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    ep = await startActionEndpoint();
    t = await createTestApp({
      dialect,
      env: {
        ANSWERDESK_METRICS_TOKEN: METRICS_TOKEN,
        ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true',
        ANSWERDESK_SECRET_KEY: 'test-secret-key-for-metrics-0123456789',
        OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await ep.close();
  });

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('answers only the metrics token, in constant-time comparison, and never an API key', async () => {
    const p = await createProject(t);
    for (const headers of [{}, bearer('metrics-token-0123456789abcdeX'), bearer(p.secretKey), { 'x-api-key': METRICS_TOKEN }, { authorization: `Basic ${METRICS_TOKEN}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Unauthorized' });
    }
    const text = await scrape();
    // Node's default series, event-loop lag among them.
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts real traffic: requests by route pattern, answers, tokens, tool calls, X-Request-Id on action calls', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/actions`,
      headers: adminAuth(),
      payload: {
        name: 'track_order',
        description: 'Look up where an order is.',
        url: `${ep.base}/orders/{orderNumber}`,
        parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const before = await scrape();
    const convRoute = { route: '/api/v1/chat/conversations/:conversationId', method: 'GET', status: '200' };
    const readsBefore = sample(before, 'http_request_duration_seconds_count', convRoute) ?? 0;

    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = conv.json().conversationId as string;
    fake.enqueue(
      { toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-1234' } }], usage: { prompt_tokens: 120, completion_tokens: 7 } },
      { text: 'Your order has shipped.', usage: { prompt_tokens: 150, completion_tokens: 5 } },
    );
    const calls = ep.received.length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Where is order A-1234?' }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await parseAnswer(res.body)).message?.parts.some((part) => part.type === 'tool-track_order')).toBe(true);
    // The answer's request id reaches the action endpoint, so its logs and ours meet.
    const call = ep.received.slice(calls).find((r) => r.rawUrl === '/orders/A-1234');
    expect(call?.headers['x-request-id']).toBe(res.headers['x-request-id']);
    expect(res.headers['x-request-id']).toMatch(/^req_\w{16}$/);
    for (const id of ['conv_unknown0000000000000000', conversationId]) {
      await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(p.publicKey) });
    }

    const text = await scrape();
    // Requests are labelled by the route pattern, never by the URL's ids.
    expect(sample(text, 'http_request_duration_seconds_count', convRoute)).toBe(readsBefore + 1);
    expect(sample(text, 'http_request_duration_seconds_count', { ...convRoute, status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(conversationId);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/api/v1/chat/messages', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'answerdesk_model_tokens_total', { project: p.project.id, model: 'openai-compatible:fake', type: 'input' })).toBe(270);
    expect(sample(text, 'answerdesk_model_tokens_total', { project: p.project.id, model: 'openai-compatible:fake', type: 'output' })).toBe(12);
    // The answer came from the action it called: its stored outcome is `action`.
    expect(sample(text, 'answerdesk_answers_total', { outcome: 'action', finish_reason: 'stop' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'answerdesk_tool_calls_total', { kind: 'action', status: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'answerdesk_answer_ttfb_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'answerdesk_answer_duration_seconds_count', { outcome: 'action' })).toBeGreaterThanOrEqual(1);
    const stored = await t.deps.store.db.selectFrom('messages').select('outcome').where('conversation_id', '=', conversationId).where('role', '=', 'assistant').execute();
    expect(stored).toEqual([{ outcome: 'action' }]);
    expect(sample(text, 'answerdesk_open_streams')).toBe(0);
    expect(sample(text, 'answerdesk_knowledge_queue_depth')).toBeGreaterThanOrEqual(0);
    if (dialect.name === 'postgres') expect(sample(text, 'answerdesk_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
  });

  // The queue depth and pending deliveries are read from the database while the scrape runs: the
  // pool gauge must show the pool as the scrape found it, not those queries queued for a connection.
  it('reports an idle pool as idle, with nobody waiting (SQLite has no pool, and no such series)', async () => {
    await scrape();
    const text = await scrape();
    if (dialect.name === 'sqlite') {
      expect(text).not.toContain('answerdesk_db_pool_connections{');
      return;
    }
    expect(sample(text, 'answerdesk_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'answerdesk_db_pool_connections', { state: 'in_use' })).toBe(0);
    expect(sample(text, 'answerdesk_db_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('counts a failed answer and a failed action call by status', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/actions`,
      headers: adminAuth(),
      payload: { name: 'broken', description: 'Always fails.', url: `${ep.base}/status/502`, parameters: { type: 'object', properties: {} } },
    });
    const before = await scrape();
    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    fake.enqueue({ toolCalls: [{ name: 'broken', arguments: {} }] }, { httpError: { status: 500, body: { error: 'boom' } } }, { httpError: { status: 500, body: { error: 'boom' } } });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId: conv.json().conversationId, messages: [{ role: 'user', content: 'Do it' }] },
    });
    expect(res.statusCode).toBe(200);
    const text = await scrape();
    const delta = (name: string, labels: Record<string, string>) => (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('answerdesk_tool_calls_total', { kind: 'action', status: 'http_error' })).toBe(1);
    expect(delta('answerdesk_answers_total', { outcome: 'error', finish_reason: 'error' })).toBe(1);
    expect(delta('answerdesk_answer_duration_seconds_count', { outcome: 'error' })).toBe(1);
  });

  it('counts the model tokens an eval run spends, by project and model', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    fake.enqueue({ text: 'We ship to Europe only.', usage: { prompt_tokens: 55, completion_tokens: 9 } });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/evals/run`,
      headers: adminAuth(),
      payload: { cases: [{ question: 'Do you ship to Mars?', answerable: false }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results[0].outcome).toBe('answered');
    const text = await scrape();
    expect(sample(text, 'answerdesk_model_tokens_total', { project: p.project.id, model: 'openai-compatible:fake', type: 'input' })).toBe(55);
    expect(sample(text, 'answerdesk_model_tokens_total', { project: p.project.id, model: 'openai-compatible:fake', type: 'output' })).toBe(9);
  });

  it('counts answers by the outcome stored with them', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    const before = await scrape();
    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    fake.enqueue({ text: 'Hello! How can I help?', usage: { prompt_tokens: 40, completion_tokens: 6 } });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId: conv.json().conversationId, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(res.statusCode).toBe(200);
    const text = await scrape();
    const delta = (labels: Record<string, string>) => (sample(text, 'answerdesk_answers_total', labels) ?? 0) - (sample(before, 'answerdesk_answers_total', labels) ?? 0);
    expect(delta({ outcome: 'answered', finish_reason: 'stop' })).toBe(1);
    expect(sample(text, 'answerdesk_model_tokens_total', { project: p.project.id, model: 'openai-compatible:fake', type: 'output' })).toBe(6);
  });

  it('counts rate-limit rejections by bucket', async () => {
    const p = await createProject(t, { rateLimits: { general: 1 } });
    const before = sample(await scrape(), 'answerdesk_rate_limit_rejections_total', { bucket: 'general' }) ?? 0;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) })).statusCode);
    expect(statuses).toEqual([200, 429, 429]);
    expect(sample(await scrape(), 'answerdesk_rate_limit_rejections_total', { bucket: 'general' })).toBe(before + 2);
  });

  it('counts webhook deliveries by event and status, their durations and the unsettled ones, never an endpoint or project', async () => {
    const up = await startWebhookReceiver();
    const down = await startWebhookReceiver();
    down.fallback = { status: 500 };
    let worker: WebhookWorker | undefined;
    try {
      const p = await createProject(t);
      const hook = async (base: string) => {
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/v1/admin/projects/${p.project.id}/webhooks`,
          headers: adminAuth(),
          // A token in the query, as some receivers want: it must not reach the metrics.
          payload: { url: `${base}/hooks?token=receiver-token-42`, events: ['conversation.created'] },
        });
        expect(res.statusCode).toBe(201);
        return res.json().webhook.id as string;
      };
      const ok = await hook(up.base);
      await hook(down.base);
      const off = await hook(up.base);
      const conversation = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
      expect(conversation.statusCode).toBe(201);
      // Turned off while its delivery waits: the worker drops it unsent.
      const patched = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${off}`, headers: adminAuth(), payload: { enabled: false } });
      expect(patched.statusCode).toBe(200);

      let text = await scrape();
      expect(sample(text, 'answerdesk_webhook_deliveries_pending')).toBe(3);
      expect(sample(text, 'answerdesk_webhook_deliveries_total')).toBeUndefined();

      // The worker as the server runs it, on the app's deps (its metrics), with a short retry schedule.
      worker = startWebhookWorker(webhookDeps(t.deps), { scheduleMs: [0, 40], pollMs: 20, timeoutMs: 5000 });
      await waitFor(async () => (await unsettledDeliveryCount(t.deps.store.db)) === 0, 15_000, 'deliveries settled');
      await worker.stop();
      worker = undefined;
      expect(down.received).toHaveLength(2);

      text = await scrape();
      const event = 'conversation.created';
      expect(sample(text, 'answerdesk_webhook_deliveries_total', { event, status: 'success' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_deliveries_total', { event, status: 'retry' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_deliveries_total', { event, status: 'failed' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_deliveries_total', { event, status: 'dropped' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_delivery_duration_seconds_count', { status: 'success' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_delivery_duration_seconds_count', { status: 'retry' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_delivery_duration_seconds_count', { status: 'failed' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_delivery_duration_seconds_sum', { status: 'success' })).toBeGreaterThan(0);
      expect(sample(text, 'answerdesk_webhook_deliveries_pending')).toBe(0);

      // The test event of the admin API is an ordinary delivery, counted under its own type.
      const tested = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${ok}/test`, headers: adminAuth() });
      expect(tested.statusCode).toBe(200);
      text = await scrape();
      expect(sample(text, 'answerdesk_webhook_deliveries_total', { event: 'webhook.test', status: 'success' })).toBe(1);
      expect(sample(text, 'answerdesk_webhook_delivery_duration_seconds_count', { status: 'success' })).toBe(2);

      const webhookLines = text.split('\n').filter((l) => l.startsWith('answerdesk_webhook_'));
      expect(webhookLines.length).toBeGreaterThan(10);
      for (const line of webhookLines) {
        expect(line).not.toContain('127.0.0.1');
        expect(line).not.toContain('receiver-token-42');
        expect(line).not.toContain(p.project.id);
        expect(line).not.toContain(ok);
      }
    } finally {
      await worker?.stop();
      await up.close();
      await down.close();
    }
  });

  it('serves the same series on METRICS_PORT, with the same token', async () => {
    const server = await serveMetrics(t.deps.metrics, METRICS_TOKEN, 0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${server.port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${server.port}/api/v1/chat/conversations`, { headers: bearer(METRICS_TOKEN) })).status).toBe(404);
      const res = await fetch(url, { headers: bearer(METRICS_TOKEN) });
      expect(res.status).toBe(200);
      expect(sample(await res.text(), 'answerdesk_open_streams')).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('GET /metrics without ANSWERDESK_METRICS_TOKEN', () => {
  it('refuses METRICS_PORT without a token at start', () => {
    expect(() => loadConfig({ METRICS_PORT: '9464' })).toThrow(/METRICS_PORT: needs ANSWERDESK_METRICS_TOKEN/);
    expect(loadConfig({ METRICS_PORT: '9464', ANSWERDESK_METRICS_TOKEN: METRICS_TOKEN }).METRICS_PORT).toBe(9464);
  });

  it('is off: 404 with or without a token, and nothing is recorded', async () => {
    const t = await createTestApp();
    try {
      expect(t.deps.metrics.enabled).toBe(false);
      for (const headers of [{}, bearer(METRICS_TOKEN)]) {
        const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: 'Not found' });
      }
    } finally {
      await t.close();
    }
  });
});
