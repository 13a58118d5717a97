import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { secretBox } from '../../lib/secret-box.js';
import type { CreatedProject } from '../../projects/projects.js';
import { createEndpoint, secretContext } from '../../webhooks/endpoints.js';
import type { Webhook, WebhookDelivery } from './schema.js';

const SECRET_KEY = 'test-secret-key-for-webhooks-0123456789';

describe.each(dialects)('webhooks admin API on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let other: CreatedProject;
  let receiver: WebhookReceiver;
  const logs: string[] = [];
  const url = (project = p) => `/api/v1/admin/projects/${project.project.id}/webhooks`;

  beforeAll(async () => {
    // The receiver is on loopback: private addresses allowed here (the SSRF guard has its own tests below).
    t = await createTestApp({
      dialect,
      env: { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
      logger: { level: 'warn', stream: { write: (line: string) => logs.push(line) } },
    });
    receiver = await startWebhookReceiver();
  });
  beforeEach(async () => {
    p = await createProject(t);
    other = await createProject(t, {}, 'Other');
    receiver.received.length = 0;
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const create = (body: unknown, headers = adminAuth(), project = p) => t.app.inject({ method: 'POST', url: url(project), headers, payload: body as object });

  async function created(body: Record<string, unknown> = {}) {
    const res = await create({ url: `${receiver.base}/hooks`, ...body });
    expect(res.statusCode).toBe(201);
    return res.json() as { webhook: Webhook; secret: string };
  }

  it('creates an endpoint: 201 with the secret once, stored only encrypted', async () => {
    const res = await create({ url: `${receiver.base}/hooks`, events: ['message.created', 'feedback.created'], description: 'CRM' });
    expect(res.statusCode).toBe(201);
    const { webhook, secret } = res.json() as { webhook: Webhook; secret: string };
    expect(webhook).toMatchObject({
      projectId: p.project.id,
      url: `${receiver.base}/hooks`,
      events: ['message.created', 'feedback.created'],
      description: 'CRM',
      enabled: true,
      disabledReason: null,
      previousSecretValidUntil: null,
    });
    expect(webhook.id).toMatch(/^wh_[0-9A-Za-z]{22}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const row = await t.deps.store.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret.slice(6, 30));
    expect(secretBox(t.config).open(row.secret, secretContext(webhook.id))).toBe(secret);

    for (const read of [
      await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}`, headers: adminAuth() }),
      await t.app.inject({ method: 'GET', url: url(), headers: auth(p.secretKey) }),
    ]) {
      expect(read.statusCode).toBe(200);
      expect(read.body).not.toContain(secret.slice(6));
      expect(read.body).toContain(webhook.id);
    }
    // Absent events: every type, those added later too.
    expect((await created()).webhook.events).toBeNull();
  });

  it('refuses bad input with 400 Validation error and the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'url'],
      [{ url: 'ftp://example.com/hook' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:pass@example.com/hook' }, 'url'],
      [{ url: `https://example.com/${'a'.repeat(2100)}` }, 'url'],
      [{ url: 'https://example.com/hook', events: ['message.deleted'] }, 'events.0'],
      [{ url: 'https://example.com/hook', events: [] }, 'events'],
      [{ url: 'https://example.com/hook', events: 'message.created' }, 'events'],
      [{ url: 'https://example.com/hook', description: 'x'.repeat(501) }, 'description'],
      [{ url: 'https://example.com/hook', secret: 'whsec_mine' }, 'body'],
    ];
    for (const [body, path] of cases) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().error).toBe('Validation error');
      expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const patch = await t.app.inject({ method: 'PATCH', url: `${url()}/${(await created()).webhook.id}`, headers: adminAuth(), payload: { enabled: 'yes' } });
    expect(patch.statusCode).toBe(400);
    const rotate = await t.app.inject({ method: 'POST', url: `${url()}/wh_x/secret/rotate`, headers: adminAuth(), payload: { previousSecretValidForSeconds: -1 } });
    expect(rotate.statusCode).toBe(400);
    const list = await t.app.inject({ method: 'GET', url: `${url()}/wh_x/deliveries?status=lost&limit=0`, headers: adminAuth() });
    expect(list.statusCode).toBe(400);
    expect(await t.deps.store.db.selectFrom('webhook_endpoints').select('id').where('project_id', '=', p.project.id).execute()).toHaveLength(1);
  });

  it('keeps projects apart: 404 for another project, 401 for a public key', async () => {
    const { webhook } = await created();
    const paths = ['', '/deliveries', '/deliveries/dlv_x'];
    for (const path of paths) {
      const res = await t.app.inject({ method: 'GET', url: `${url(other)}/${webhook.id}${path}`, headers: adminAuth() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Webhook not found' });
    }
    const foreign = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}`, headers: auth(other.secretKey) });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'Project not found' });
    const deleted = await t.app.inject({ method: 'DELETE', url: `${url(other)}/${webhook.id}`, headers: adminAuth() });
    expect(deleted.statusCode).toBe(404);
    const pub = await t.app.inject({ method: 'GET', url: url(), headers: auth(p.publicKey) });
    expect(pub.statusCode).toBe(401);
    const unknownDelivery = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/deliveries/dlv_nope/retry`, headers: adminAuth() });
    expect(unknownDelivery.statusCode).toBe(404);
    expect(unknownDelivery.json()).toEqual({ error: 'Delivery not found' });
  });

  it('updates, turns off and on, and deletes an endpoint', async () => {
    const { webhook } = await created({ events: ['message.created'] });
    const res = await t.app.inject({
      method: 'PATCH',
      url: `${url()}/${webhook.id}`,
      headers: adminAuth(),
      payload: { url: `${receiver.base}/v2`, events: null, description: 'Warehouse', enabled: false },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook).toMatchObject({ url: `${receiver.base}/v2`, events: null, description: 'Warehouse', enabled: false, disabledReason: null });
    expect(res.json().webhook.disabledAt).toEqual(expect.any(String));

    // Off: a test event is refused, nothing is sent.
    const test = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    expect(test.statusCode).toBe(409);
    expect(test.json()).toEqual({ error: 'Webhook is disabled' });
    expect(receiver.received).toHaveLength(0);

    const resumed = await t.app.inject({ method: 'PATCH', url: `${url()}/${webhook.id}`, headers: adminAuth(), payload: { enabled: true } });
    expect(resumed.json().webhook).toMatchObject({ enabled: true, disabledAt: null });

    const del = await t.app.inject({ method: 'DELETE', url: `${url()}/${webhook.id}`, headers: adminAuth() });
    expect(del.statusCode).toBe(204);
    const gone = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}`, headers: adminAuth() });
    expect(gone.statusCode).toBe(404);
  });

  it('holds the URL limit for the URL as stored: 2048 characters once percent-encoded', async () => {
    const accented = `${receiver.base}/${'é'.repeat(2000)}`;
    const res = await create({ url: accented });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: [{ path: 'url', message: `must be at most 2048 characters once encoded (it is ${new URL(accented).href.length})` }] });
    const { webhook } = await created();
    const patched = await t.app.inject({ method: 'PATCH', url: `${url()}/${webhook.id}`, headers: adminAuth(), payload: { url: accented } });
    expect(patched.statusCode).toBe(400);
    const fits = `${receiver.base}/${'é'.repeat(300)}`;
    expect((await create({ url: fits })).json().webhook.url).toBe(new URL(fits).href);
  });

  it('logs a test event that fails, and the 410 that turns the endpoint off, as the worker logs its attempts', async () => {
    const { webhook } = await created();
    logs.length = 0;
    receiver.script({ status: 500 }, { status: 410 });
    const failed = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    expect(failed.json().delivery).toMatchObject({ status: 'pending', responseStatus: 500 });
    const gone = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    expect(gone.json().delivery).toMatchObject({ status: 'failed', responseStatus: 410, error: 'HTTP 410' });
    const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.msg === 'webhook delivery failed').map((l) => [l.webhookId, l.status, l.reason])).toEqual([
      [webhook.id, 500, 'HTTP 500'],
      [webhook.id, 410, 'HTTP 410'],
    ]);
    expect(lines.filter((l) => l.msg === 'webhook disabled')).toEqual([expect.objectContaining({ webhookId: webhook.id, reason: 'The endpoint answered 410 Gone' })]);
    expect(logs.join('\n')).not.toContain(receiver.base);
  });

  it('sends a signed test event that an independent Standard Webhooks verifier accepts', async () => {
    const { webhook, secret } = await created();
    const res = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    const { delivery } = res.json() as { delivery: WebhookDelivery };
    expect(delivery).toMatchObject({ webhookId: webhook.id, eventType: 'webhook.test', status: 'delivered', attempts: 1, responseStatus: 204, error: null, nextAttemptAt: null });
    expect(delivery.durationMs).toEqual(expect.any(Number));

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.path).toBe('/hooks');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(delivery.eventId);
    const payload = new StandardWebhook(secret).verify(got.body, got.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toMatchObject({ type: 'webhook.test', data: { webhookId: webhook.id } });
    expect(payload.timestamp).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
    // A wrong secret, a changed body or another id fails verification.
    const otherSecret = (await created()).secret;
    expect(() => new StandardWebhook(otherSecret).verify(got.body, got.headers as Record<string, string>)).toThrow();
    expect(() => new StandardWebhook(secret).verify(got.body.replace('webhook.test', 'webhook.tesT'), got.headers as Record<string, string>)).toThrow();
    expect(() => new StandardWebhook(secret).verify(got.body, { ...(got.headers as Record<string, string>), 'webhook-id': 'evt_other' })).toThrow();

    const list = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries`, headers: adminAuth() });
    expect(list.json().deliveries).toEqual([delivery]);
  });

  it('rotates the secret: both signatures during the grace period, only the new one without it', async () => {
    const { webhook, secret: oldSecret } = await created();
    const rotated = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/secret/rotate`, headers: adminAuth() });
    expect(rotated.statusCode).toBe(200);
    const { secret: newSecret, webhook: after } = rotated.json() as { webhook: Webhook; secret: string };
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(after.previousSecretValidUntil!) - Date.now()).toBeGreaterThan(23 * 3600_000);

    await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    const during = receiver.received.at(-1)!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const s of [oldSecret, newSecret]) expect(() => new StandardWebhook(s).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    const now = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/secret/rotate`, headers: adminAuth(), payload: { previousSecretValidForSeconds: 0 } });
    const latest = now.json().secret as string;
    expect(now.json().webhook.previousSecretValidUntil).toBeNull();
    await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    const afterwards = receiver.received.at(-1)!;
    expect(() => new StandardWebhook(latest).verify(afterwards.body, afterwards.headers as Record<string, string>)).not.toThrow();
    expect(() => new StandardWebhook(newSecret).verify(afterwards.body, afterwards.headers as Record<string, string>)).toThrow();
  });

  it('records a failed test attempt with its status and schedules the next; a retry makes it due again', async () => {
    const { webhook } = await created();
    receiver.script({ status: 500 });
    const res = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    const { delivery } = res.json() as { delivery: WebhookDelivery };
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 500, error: 'HTTP 500' });
    // The second attempt of the default schedule is about 5 s later (±10 %).
    const wait = Date.parse(delivery.nextAttemptAt!) - Date.parse(delivery.lastAttemptAt!);
    expect(wait).toBeGreaterThanOrEqual(4400);
    expect(wait).toBeLessThanOrEqual(5600);

    const retried = await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/deliveries/${delivery.id}/retry`, headers: adminAuth() });
    expect(retried.statusCode).toBe(202);
    expect(retried.json().delivery).toMatchObject({ id: delivery.id, status: 'pending', attempts: 0 });
    expect(Date.parse(retried.json().delivery.nextAttemptAt)).toBeLessThanOrEqual(Date.now());

    const failedOnly = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries?status=failed`, headers: adminAuth() });
    expect(failedOnly.json().deliveries).toEqual([]);
    const one = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries/${delivery.id}`, headers: adminAuth() });
    expect(one.json().delivery.id).toBe(delivery.id);
  });

  it('pages the deliveries newest first', async () => {
    const { webhook } = await created();
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'POST', url: `${url()}/${webhook.id}/test`, headers: adminAuth() });
    const first = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries?limit=2`, headers: adminAuth() });
    expect(first.json().deliveries).toHaveLength(2);
    const next = first.json().nextCursor as string;
    const second = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries?limit=2&cursor=${encodeURIComponent(next)}`, headers: adminAuth() });
    expect(second.json().deliveries).toHaveLength(1);
    expect(second.json().nextCursor).toBeUndefined();
    const bad = await t.app.inject({ method: 'GET', url: `${url()}/${webhook.id}/deliveries?cursor=nonsense`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
  });
});

describe.each(dialects)('webhook URLs and the SSRF guard on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // Guard on (ANSWERDESK_ALLOW_PRIVATE_NETWORK unset).
    t = await createTestApp({ dialect, env: { ANSWERDESK_SECRET_KEY: SECRET_KEY } });
    p = await createProject(t);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('refuses a literal private, loopback or metadata address, or localhost, when the endpoint is created or its URL changed', async () => {
    const refused = [
      'http://127.0.0.1:9/x',
      'http://10.0.0.5/x',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      // Names that always mean loopback (RFC 6761), in any case, with or without the final dot.
      `http://localhost:${receiver.port}/x`,
      'http://foo.localhost/x',
      'http://LOCALHOST./x',
    ];
    for (const u of refused) {
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks`, headers: adminAuth(), payload: { url: u } });
      expect([u, res.statusCode, res.json().details]).toEqual([u, 400, [{ path: 'url', message: 'must not point at a private, loopback or link-local address' }]]);
    }
    expect(await t.deps.store.db.selectFrom('webhook_endpoints').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
    // Other names are not resolved when the endpoint is created (they are at every delivery).
    const created = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks`, headers: adminAuth(), payload: { url: 'https://hooks.example.com/x' } });
    expect(created.statusCode).toBe(201);
    const id = created.json().webhook.id as string;
    const moved = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${id}`, headers: adminAuth(), payload: { url: 'http://api.localhost/x' } });
    expect([moved.statusCode, moved.json().details]).toEqual([400, [{ path: 'url', message: 'must not point at a private, loopback or link-local address' }]]);
    expect((await t.deps.store.db.selectFrom('webhook_endpoints').select('url').where('id', '=', id).executeTakeFirstOrThrow()).url).toBe('https://hooks.example.com/x');
    await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${id}`, headers: adminAuth() });
  });

  it('refuses at delivery a host name that resolves to a private address: nothing reaches it', async () => {
    // Stored as with ANSWERDESK_ALLOW_PRIVATE_NETWORK (the API refuses localhost at creation with the guard on).
    const { row } = await createEndpoint(t.deps.store.db, secretBox(t.config), p.project.id, { url: `http://localhost:${receiver.port}/hooks` }, { allowPrivateNetwork: true });
    const test = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/webhooks/${row.id}/test`, headers: adminAuth() });
    expect(test.json().delivery).toMatchObject({ status: 'pending', responseStatus: null, error: 'Refused to connect to localhost: address not allowed' });
    expect(receiver.received).toHaveLength(0);
  });
});
