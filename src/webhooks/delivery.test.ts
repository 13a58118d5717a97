import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../test/fakes/webhook-receiver.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type DialectCase, type TestApp } from '../../test/helper.js';
import { waitFor } from '../../test/wait.js';
import { webhookDeps } from '../api/webhooks/service.js';
import { secretBox } from '../lib/secret-box.js';
import { appendMessage } from '../conversations/messages.js';
import { startKnowledgeWorker } from '../knowledge/jobs.js';
import type { CreatedProject } from '../projects/projects.js';
import { openStore } from '../store/index.js';
import { insertEvent } from './events.js';
import { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from './worker.js';

const SECRET_KEY = 'test-secret-key-for-webhooks-0123456789';
const ENV = { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' };
/** Tests create more conversations a minute than the default session bucket allows. */
const ROOMY = { rateLimits: { session: 1000, general: 1000, chat: 1000 } };

/**
 * Short schedules: the retry logic is the same, only the delays are milliseconds instead of hours.
 * The time budget stays roomy: on a busy machine a late 2xx would count as a timeout and be sent again.
 */
const FAST: WebhookWorkerOptions = { scheduleMs: [0, 40, 40, 40, 40], pollMs: 20, timeoutMs: 5000 };

function verified(secret: string, got: ReceivedWebhook): { type: string; timestamp: string; data: Record<string, any> } {
  return new StandardWebhook(secret).verify(got.body, got.headers as Record<string, string>) as never;
}

async function createWebhook(t: TestApp, p: CreatedProject, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks`, headers: adminAuth(), payload: body });
  expect(res.statusCode).toBe(201);
  return res.json() as { webhook: { id: string }; secret: string };
}

async function newConversation(t: TestApp, p: CreatedProject, endUserExternalId?: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: endUserExternalId ? { endUserExternalId } : undefined });
  expect(res.statusCode).toBe(201);
  return res.json().conversationId;
}

const deliveriesOf = (t: TestApp, webhookId: string) =>
  t.deps.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', webhookId).orderBy('created_at').execute();

describe.each(dialects)('webhook events and delivery on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let receiver: WebhookReceiver;
  let workers: WebhookWorker[] = [];
  const start = (options: WebhookWorkerOptions = {}) => {
    const w = startWebhookWorker(webhookDeps(t.deps), { ...FAST, ...options });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    t = await createTestApp({ dialect, env: ENV });
  });
  beforeEach(async () => {
    p = await createProject(t, ROOMY);
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
    await receiver.close();
  });
  afterAll(() => t.close());

  it('sends every event of a conversation and of knowledge, signed, each to the endpoints that take it', async () => {
    const all = await createWebhook(t, p, { url: `${receiver.base}/all` });
    const feedbackOnly = await createWebhook(t, p, { url: `${receiver.base}/feedback`, events: ['feedback.created'] });
    start();

    const conversationId = await newConversation(t, p, 'user-42');
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Hello there' }] },
    });
    expect(sent.statusCode).toBe(200);
    const messages = await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const rated = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/feedback',
      headers: auth(p.publicKey),
      payload: { conversationId, messageId: messages[1]!.id, rating: 'NEGATIVE', comment: 'Not what I asked' },
    });
    expect(rated.statusCode).toBe(201);
    const closed = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${conversationId}/close`, headers: adminAuth() });
    expect(closed.statusCode).toBe(200);
    // Closing again changes nothing and sends nothing.
    await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${conversationId}/close`, headers: adminAuth() });

    const knowledge = startKnowledgeWorker(t.deps, { pollMs: 20 });
    try {
      for (const body of [
        { type: 'text', title: 'Opening hours', content: 'We are open from 9 to 5 on weekdays.' },
        { type: 'url', url: 'http://127.0.0.1:1/nothing-listens-here' },
      ]) {
        const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge`, headers: adminAuth(), payload: body });
        expect(res.statusCode).toBe(201);
      }
      await waitFor(() => new Set(receiver.received.filter((r) => r.path === '/all').map((r) => r.headers['webhook-id'])).size >= 7, 20_000, 'seven events');
    } finally {
      await knowledge.stop();
    }

    // A receiver drops repeats by webhook-id (delivery is at least once).
    const unique = [...new Map(receiver.received.filter((r) => r.path === '/all').map((r) => [r.headers['webhook-id'], r])).values()];
    const got = unique.map((r) => ({ raw: r, body: verified(all.secret, r) }));
    const byType = (type: string) => got.filter((g) => g.body.type === type).map((g) => g.body.data);
    expect(got.map((g) => g.body.type).sort()).toEqual(
      [
        'conversation.closed',
        'conversation.created',
        'feedback.created',
        'knowledge.source.failed',
        'knowledge.source.ready',
        'message.created',
        'message.created',
      ].sort(),
    );
    expect(byType('conversation.created')).toEqual([
      { conversation: { id: conversationId, projectId: p.project.id, endUserId: 'user-42', status: 'ACTIVE', createdAt: expect.any(String) } },
    ]);
    const messageEvents = byType('message.created');
    expect(messageEvents.map((d) => d.message.role).sort()).toEqual(['assistant', 'user']);
    expect(messageEvents.find((d) => d.message.role === 'user')).toEqual({
      conversationId,
      message: { id: messages[0]!.id, role: 'user', content: 'Hello there', status: 'complete', outcome: null, sources: null, createdAt: messages[0]!.created_at },
    });
    expect(messageEvents.find((d) => d.message.role === 'assistant')).toMatchObject({ conversationId, message: { id: messages[1]!.id, status: 'complete' } });
    expect(byType('feedback.created')).toEqual([
      {
        conversationId,
        feedback: { id: expect.any(String), messageId: messages[1]!.id, rating: 'NEGATIVE', comment: 'Not what I asked', createdAt: expect.any(String), updatedAt: expect.any(String) },
      },
    ]);
    expect(byType('conversation.closed')).toEqual([{ conversation: { id: conversationId, projectId: p.project.id, status: 'CLOSED', closedAt: expect.any(String) }, previousHandoff: null }]);
    expect(byType('knowledge.source.ready')[0]).toMatchObject({ source: { projectId: p.project.id, type: 'text', title: 'Opening hours', status: 'ready' } });
    expect(byType('knowledge.source.ready')[0]!.source.chunkCount).toBeGreaterThan(0);
    expect(byType('knowledge.source.failed')[0]).toMatchObject({ source: { type: 'url', status: 'failed', error: expect.any(String) } });

    // webhook-id is the stored event id; every delivery is recorded as delivered once.
    const events = await t.deps.store.db.selectFrom('webhook_events').select(['id', 'type']).where('project_id', '=', p.project.id).execute();
    expect(new Set(got.map((g) => g.raw.headers['webhook-id']))).toEqual(new Set(events.map((e) => e.id)));
    // The receiver saw the last request before the worker read its answer: wait for the record.
    const rows = await waitFor(async () => {
      const list = await deliveriesOf(t, all.webhook.id);
      return list.every((r) => r.status === 'delivered') ? list : null;
    }, 10_000, 'all recorded as delivered');
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => r.response_status === 204 && r.error === null)).toBe(true);

    // The filtered endpoint got the feedback only.
    await waitFor(() => receiver.received.some((r) => r.path === '/feedback'));
    const filtered = receiver.received.filter((r) => r.path === '/feedback').map((r) => verified(feedbackOnly.secret, r).type);
    expect([...new Set(filtered)]).toEqual(['feedback.created']);
  });

  it('writes the event in the transaction of its change: a change that fails leaves no event', async () => {
    await createWebhook(t, p, { url: `${receiver.base}/all` });
    const conversationId = await newConversation(t, p);
    const conv = { id: conversationId, project_id: p.project.id };
    const first = await appendMessage(t.deps.store.db, conv, { role: 'user', content: 'one', status: 'complete' });
    // The same id again: the insert fails, and with it the event.
    await expect(appendMessage(t.deps.store.db, conv, { id: first.id, role: 'assistant', content: 'two', status: 'complete' })).rejects.toThrow();
    const types = await t.deps.store.db.selectFrom('webhook_events').select('type').where('project_id', '=', p.project.id).orderBy('created_at').execute();
    expect(types.map((e) => e.type)).toEqual(['conversation.created', 'message.created']);
    // A project without endpoints stores no event at all.
    const quiet = await createProject(t, {}, 'Quiet');
    await newConversation(t, quiet);
    expect(await t.deps.store.db.selectFrom('webhook_events').select('id').where('project_id', '=', quiet.project.id).execute()).toEqual([]);
  });

  it('retries after 500s and a timeout, with the same id and a fresh valid signature each time', async () => {
    const { webhook, secret } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.script({ status: 500 }, { status: 503 }, 'hang');
    start({ timeoutMs: 1500 });
    await newConversation(t, p);
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(t, webhook.id);
      return rows[0]?.status === 'delivered' ? rows : null;
    }, 15_000, 'delivered');
    expect(row).toMatchObject({ attempts: 4, response_status: 204, error: null, next_attempt_at: null });
    expect(receiver.received.map((r) => r.answered)).toEqual([500, 503, null, 204]);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of receiver.received) expect(verified(secret, r).type).toBe('conversation.created');
  });

  it('gives up after the last attempt of the schedule, and says why', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.fallback = { status: 500 };
    start({ scheduleMs: [0, 30, 30] });
    await newConversation(t, p);
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(t, webhook.id);
      return rows[0]?.status === 'failed' ? rows : null;
    }, 15_000, 'failed');
    expect(row).toMatchObject({ attempts: 3, response_status: 500, error: 'HTTP 500', next_attempt_at: null });
    expect(receiver.received).toHaveLength(3);
    const read = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${webhook.id}`, headers: adminAuth() });
    expect(read.json().webhook).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('turns off an endpoint that keeps failing, with the reason, and sends it nothing more', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.fallback = { status: 502 };
    start({ scheduleMs: [0, 60, 60, 60, 60, 60], disableAfterMs: 100 });
    await newConversation(t, p);
    await newConversation(t, p);
    const read = await waitFor(async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${webhook.id}`, headers: adminAuth() });
      return res.json().webhook.enabled === false ? res.json().webhook : null;
    }, 15_000, 'disabled');
    expect(read.disabledReason).toMatch(/^Every delivery failed for \d+ seconds? \(last: HTTP 502\)$/);
    // The other delivery fails with it (at once, or when its attempt in flight ends).
    const rows = await waitFor(async () => {
      const all = await deliveriesOf(t, webhook.id);
      return all.every((r) => r.status === 'failed') ? all : null;
    }, 10_000, 'all failed');
    const before = receiver.received.length;
    await newConversation(t, p);
    expect(await deliveriesOf(t, webhook.id)).toHaveLength(2);
    expect(receiver.received).toHaveLength(before);

    // Turned back on, a retry sends a failed delivery again.
    receiver.fallback = { status: 200 };
    await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${webhook.id}`, headers: adminAuth(), payload: { enabled: true } });
    const retried = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${webhook.id}/deliveries/${rows[0]!.id}/retry`, headers: adminAuth() });
    expect(retried.statusCode).toBe(202);
    await waitFor(async () => (await deliveriesOf(t, webhook.id))[0]!.status === 'delivered', 10_000, 'retried delivery');
  });

  it('counts a run of failures only while they keep coming, and the attempt that ends it keeps its error', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.fallback = { status: 500 };
    start({ scheduleMs: [0, 600_000] });
    const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    const endpoint = () => t.deps.store.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow();
    const failed = async (n: number) => waitFor(async () => ((await deliveriesOf(t, webhook.id))[n - 1]?.last_attempt_at ? deliveriesOf(t, webhook.id) : null), 10_000, `attempt ${n}`);

    // Failed six days ago, then nothing for six days: one more failure starts a new run.
    await t.deps.store.db.updateTable('webhook_endpoints').set({ failing_since: ago(144), last_failed_at: ago(144) }).where('id', '=', webhook.id).execute();
    await newConversation(t, p);
    await failed(1);
    const quiet = await endpoint();
    expect(quiet.enabled).toBe(1);
    expect(Date.parse(quiet.failing_since!)).toBeGreaterThan(Date.now() - 60_000);

    // Failing for six days with the last failure an hour ago: turned off, and the attempt that did
    // it shows its own HTTP 500, while the delivery still waiting for its retry fails unsent.
    await t.deps.store.db.updateTable('webhook_endpoints').set({ failing_since: ago(144), last_failed_at: ago(1) }).where('id', '=', webhook.id).execute();
    await newConversation(t, p);
    const rows = await failed(2);
    expect(await endpoint()).toMatchObject({ enabled: 0, disabled_reason: 'Every delivery failed for 6 days (last: HTTP 500)' });
    expect(rows[1]).toMatchObject({ status: 'failed', response_status: 500, error: 'HTTP 500' });
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'Webhook disabled' });
  });

  it('turns off an endpoint at once when it answers 410 Gone', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.script({ status: 410 });
    start();
    await newConversation(t, p);
    const read = await waitFor(async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${webhook.id}`, headers: adminAuth() });
      return res.json().webhook.enabled === false ? res.json().webhook : null;
    }, 10_000, 'disabled');
    expect(read.disabledReason).toBe('The endpoint answered 410 Gone');
    expect((await deliveriesOf(t, webhook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, response_status: 410 });
  });

  it('shares the slots: an endpoint that hangs with a backlog does not hold up deliveries to another', async () => {
    const stuck = await startWebhookReceiver();
    stuck.fallback = 'hang';
    try {
      const slow = await createWebhook(t, p, { url: `${stuck.base}/slow`, events: ['message.created'] });
      const fast = await createWebhook(t, p, { url: `${receiver.base}/fast`, events: ['message.created'] });
      // Twelve events each, the slow endpoint's due first: before, its deliveries took all eight slots.
      for (let i = 0; i < 12; i++) await insertEvent(t.deps.store.db, p.project.id, 'message.created', { n: i }, [slow.webhook.id]);
      for (let i = 0; i < 12; i++) await insertEvent(t.deps.store.db, p.project.id, 'message.created', { n: i }, [fast.webhook.id]);
      start({ concurrency: 8, timeoutMs: 60_000 });
      await waitFor(async () => (await deliveriesOf(t, fast.webhook.id)).every((d) => d.status === 'delivered'), 20_000, 'the fast endpoint served');
      // Half the slots at most went to the endpoint that never answers.
      expect(stuck.received).toHaveLength(4);
      expect((await deliveriesOf(t, slow.webhook.id)).filter((d) => d.status === 'sending')).toHaveLength(4);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      workers = [];
      await stuck.close();
    }
  });

  it('does not follow redirects', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.script({ status: 307, headers: { location: `${receiver.base}/elsewhere` } });
    start({ scheduleMs: [0] });
    await newConversation(t, p);
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(t, webhook.id);
      return rows[0]?.status === 'failed' ? rows : null;
    }, 10_000, 'failed');
    expect(row!.error).toBe('Redirect not followed: point the webhook at the final URL');
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks']);
  });

  it('records why an attempt failed without the URL: a refused connection, a timeout', async () => {
    const closed = await createWebhook(t, p, { url: 'http://127.0.0.1:1/hooks?token=abc', events: ['conversation.created'] });
    const slow = await createWebhook(t, p, { url: `${receiver.base}/slow?token=abc`, events: ['conversation.created'] });
    receiver.fallback = 'hang';
    start({ scheduleMs: [0], timeoutMs: 300 });
    await newConversation(t, p);
    const refused = await waitFor(async () => (await deliveriesOf(t, closed.webhook.id)).find((d) => d.status === 'failed'), 10_000, 'refused');
    expect(refused).toMatchObject({ error: 'Connection failed (ECONNREFUSED)', response_status: null });
    const timedOut = await waitFor(async () => (await deliveriesOf(t, slow.webhook.id)).find((d) => d.status === 'failed'), 10_000, 'timed out');
    expect(timedOut).toMatchObject({ error: 'No response within 300 ms', response_status: null });
  });

  it('keeps a delivery whose secret this node cannot open, and sends it once a node with the right key runs', async () => {
    const { webhook, secret } = await createWebhook(t, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    const wrongKey = { ...webhookDeps(t.deps), box: secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: 'another-secret-key-0123456789' }) };
    const wrong = startWebhookWorker(wrongKey, { ...FAST, scheduleMs: [0, 1000, 1000] });
    await newConversation(t, p);
    const failed = await waitFor(async () => (await deliveriesOf(t, webhook.id)).find((d) => d.attempts >= 1 && d.status === 'pending'), 10_000, 'first attempt');
    expect(failed.error).toMatch(/^The signing secret cannot be decrypted on this node/);
    await wrong.stop();
    expect(receiver.received).toHaveLength(0);
    start();
    await waitFor(async () => (await deliveriesOf(t, webhook.id))[0]!.status === 'delivered', 10_000, 'delivered');
    expect(verified(secret, receiver.received[0]!).type).toBe('conversation.created');
  });

  it('never holds up an answer: the answer is stored while its events are still undelivered', async () => {
    const { webhook } = await createWebhook(t, p, { url: `${receiver.base}/hooks` });
    receiver.fallback = 'hang';
    start({ timeoutMs: 60_000 });
    const conversationId = await newConversation(t, p);
    await waitFor(() => receiver.received.length >= 1, 10_000, 'conversation.created in flight');
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Are you there?' }] },
    });
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('"type":"finish"');
    const stored = await t.deps.store.db.selectFrom('messages').select('role').where('conversation_id', '=', conversationId).execute();
    expect(stored).toHaveLength(2);
    expect(receiver.received.every((r) => r.answered === null)).toBe(true);
    expect((await deliveriesOf(t, webhook.id)).some((d) => d.status === 'delivered')).toBe(false);
  });
});

/** Two nodes over one database: a file for SQLite (two connections), one schema for PostgreSQL (two pools). */
async function twoNodes(dialect: DialectCase): Promise<{ a: TestApp; openB: () => Promise<TestApp>; cleanup: () => Promise<void> }> {
  if (dialect.name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'answerdesk-hooks-'));
    const file: DialectCase = { name: 'sqlite', url: `sqlite:${join(dir, 'db.sqlite')}` };
    const a = await createTestApp({ dialect: file, env: ENV });
    return {
      a,
      openB: async () => createTestApp({ dialect: file, env: ENV, store: await openStore(file.url) }),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const a = await createTestApp({ dialect, env: ENV });
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(a.deps.store.db);
  const schema = rows[0]!.schema;
  return { a, openB: async () => createTestApp({ dialect, env: ENV, store: await openStore(dialect.url, { schema }) }), cleanup: async () => {} };
}

describe.each(dialects)('webhook workers on several nodes, on $name', (dialect) => {
  let receiver: WebhookReceiver;
  let nodes: Awaited<ReturnType<typeof twoNodes>>;
  let a: TestApp;
  let b: TestApp | undefined;
  const workers: WebhookWorker[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    nodes = await twoNodes(dialect);
    a = nodes.a;
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.fallback = { status: 204 };
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    if (b) {
      await b.close();
      await b.deps.store.close();
      b = undefined;
    }
  });
  afterAll(async () => {
    await receiver.close();
    await a.close();
    await nodes.cleanup();
  });

  it('sends each event once with two workers racing for them', async () => {
    const p = await createProject(a, ROOMY);
    const { webhook } = await createWebhook(a, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    b = await nodes.openB();
    for (let i = 0; i < 30; i++) await newConversation(a, p);
    workers.push(startWebhookWorker(webhookDeps(a.deps), { ...FAST, pollMs: 5 }), startWebhookWorker(webhookDeps(b.deps), { ...FAST, pollMs: 5 }));
    await waitFor(async () => (await deliveriesOf(a, webhook.id)).every((d) => d.status === 'delivered'), 20_000, 'all delivered');
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    expect((await deliveriesOf(a, webhook.id)).every((d) => d.attempts === 1)).toBe(true);
  });

  it('loses nothing across a restart mid-retry: the next node sends what is due', async () => {
    const p = await createProject(a, ROOMY);
    const { webhook, secret } = await createWebhook(a, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.script({ status: 500 });
    const first = startWebhookWorker(webhookDeps(a.deps), { ...FAST, scheduleMs: [0, 300, 300] });
    await newConversation(a, p);
    await waitFor(async () => (await deliveriesOf(a, webhook.id))[0]?.attempts === 1 && (await deliveriesOf(a, webhook.id))[0]?.status === 'pending', 10_000, 'first attempt failed');
    await first.stop();

    b = await nodes.openB();
    workers.push(startWebhookWorker(webhookDeps(b.deps), { ...FAST, scheduleMs: [0, 300, 300] }));
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(b!, webhook.id);
      return rows[0]?.status === 'delivered' ? rows : null;
    }, 10_000, 'delivered by the second node');
    expect(row!.attempts).toBe(2);
    expect(receiver.received.map((r) => r.answered)).toEqual([500, 204]);
    expect(receiver.received.map((r) => verified(secret, r).type)).toEqual(['conversation.created', 'conversation.created']);
  });

  it('takes over a delivery whose node died mid-send once its lease runs out', async () => {
    const p = await createProject(a, ROOMY);
    const { webhook } = await createWebhook(a, p, { url: `${receiver.base}/hooks`, events: ['conversation.created'] });
    receiver.script('hang');
    // A node that claims, sends, and never comes back (its lease is short so the test need not wait long).
    const dead = startWebhookWorker(webhookDeps(a.deps), { ...FAST, timeoutMs: 30_000, leaseMs: 300 });
    workers.push(dead);
    await newConversation(a, p);
    await waitFor(() => receiver.received.length === 1, 10_000, 'first attempt in flight');
    b = await nodes.openB();
    workers.push(startWebhookWorker(webhookDeps(b.deps), FAST));
    await waitFor(async () => (await deliveriesOf(a, webhook.id))[0]?.status === 'delivered', 10_000, 'taken over');
    expect(receiver.received.map((r) => r.answered)).toEqual([null, 204]);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(receiver.received[1]!.headers['webhook-id']);
  });
});
