import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../test/fakes/action-endpoint.js';
import { adminAuth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import type { CreatedProject } from '../projects/projects.js';
import { createAction, loadAction, type ActionInput } from './actions.js';
import { executeAction } from './execute.js';
import { MAX_MODEL_CHARS } from './response.js';
import { secretBox } from '../lib/secret-box.js';

const API_KEY = 'configured-api-key-7f3a9c';
const USER_TOKEN = 'user-session-token-5d2e81';
const SECRET_KEY = 'test-secret-key-for-actions-0123456789';

describe.each(dialects)('action calls on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let ep: ActionEndpoint;
  let other: ActionEndpoint;
  const logs: string[] = [];

  beforeAll(async () => {
    ep = await startActionEndpoint();
    other = await startActionEndpoint();
    t = await createTestApp({
      dialect,
      env: { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
      logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
    });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    p = await createProject(t);
  });
  afterAll(async () => {
    await t.close();
    await ep.close();
    await other.close();
  });

  async function define(body: Record<string, unknown>): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/actions`, headers: adminAuth(), payload: body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().action.id as string;
  }

  async function runTest(actionId: string, payload: Record<string, unknown>) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/actions/${actionId}/test`,
      headers: adminAuth(),
      payload,
    });
    expect(res.statusCode, res.body).toBe(200);
    return { body: res.json(), raw: res.body };
  }

  it('fills path placeholders with encodeURIComponent and sends the rest as query for GET', async () => {
    const id = await define({
      name: 'find_things',
      description: 'Find things',
      url: `${ep.base}/echo/things/{id}`,
      parameters: {
        type: 'object',
        properties: { id: { type: 'string' }, tag: { type: 'array', items: { type: 'string' } }, open: { type: 'boolean' }, filter: { type: 'object' } },
        required: ['id'],
      },
    });
    const { body } = await runTest(id, { arguments: { id: 'a/b c?#%é', tag: ['x&y', 'z'], open: true, filter: { since: '2024' } } });
    expect(body.ok).toBe(true);
    const got = ep.receivedAt('/echo/things/').at(-1)!;
    expect(got.method).toBe('GET');
    expect(got.rawUrl).toBe('/echo/things/a%2Fb%20c%3F%23%25%C3%A9?tag=x%26y&tag=z&open=true&filter=%7B%22since%22%3A%222024%22%7D');
    expect(got.body).toBe('');
    expect(got.headers['content-type']).toBeUndefined();
    expect(body.request).toMatchObject({ method: 'GET', url: `${ep.base}${got.rawUrl}`, body: null });
  });

  it('sends a JSON body for POST, honouring an explicit query list', async () => {
    const id = await define({
      name: 'resend_invoice',
      description: 'Resend an invoice',
      method: 'POST',
      url: `${ep.base}/echo/invoices/{invoiceId}/resend`,
      parameters: {
        type: 'object',
        properties: { invoiceId: { type: 'string' }, email: { type: 'string', format: 'email' }, notify: { type: 'boolean' }, note: { type: 'string' } },
        required: ['invoiceId', 'email'],
      },
      query: ['notify'],
    });
    const { body } = await runTest(id, { arguments: { invoiceId: 'INV-7', email: 'ann@example.com', notify: false, note: 'He said "hi"\n' } });
    expect(body.ok).toBe(true);
    const got = ep.receivedAt('/echo/invoices/').at(-1)!;
    expect(got.method).toBe('POST');
    expect(got.rawUrl).toBe('/echo/invoices/INV-7/resend?notify=false');
    expect(got.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got.body)).toEqual({ email: 'ann@example.com', note: 'He said "hi"\n' });
  });

  it('refuses invalid arguments and dot segments without calling the endpoint, and logs the call', async () => {
    const id = await define({
      name: 'order_status',
      description: 'Order status',
      url: `${ep.base}/orders/{orderId}`,
      parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z.]-?\\d*$|^\\.\\.$' } }, required: ['orderId'] },
    });
    const before = ep.received.length;
    const bad = await runTest(id, { arguments: { orderId: 'lowercase' } });
    expect(bad.body).toMatchObject({ ok: false, request: null, response: null, error: { code: 'invalid_arguments', details: [{ path: 'orderId' }] } });
    const missing = await runTest(id, { arguments: {} });
    expect(missing.body.error.details).toEqual([{ path: 'orderId', message: 'is required' }]);
    const dots = await runTest(id, { arguments: { orderId: '..' } });
    expect(dots.body.error).toMatchObject({ code: 'invalid_arguments' });
    expect(ep.received.length).toBe(before);

    const log = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/actions/${id}/calls`, headers: adminAuth() });
    const calls = log.json().calls;
    expect(calls).toHaveLength(3);
    expect(calls[2]).toMatchObject({ source: 'test', outcome: 'error', status: null, conversationId: null });
    expect(calls[2].error).toMatch(/^Invalid arguments: orderId must match pattern/);
  });

  it('forwards user tokens but never over configured or reserved headers, and masks them everywhere', async () => {
    const id = await define({
      name: 'account_echo',
      description: 'Echo',
      method: 'POST',
      url: `${ep.base}/echo/account`,
      headers: { 'X-Api-Key': API_KEY, 'X-Shop': 'acme' },
    });
    const tokens = {
      'X-Customer-Token': USER_TOKEN,
      'X-Api-Key': 'token-trying-to-override',
      Host: 'evil.example',
      'X-AnswerDesk-User-Id': 'forged-user',
      'Content-Type': 'text/evil',
    };
    const anon = await runTest(id, { userTokens: tokens });
    const got = ep.receivedAt('/echo/account').at(-1)!;
    expect(got.headers['x-customer-token']).toBe(USER_TOKEN);
    expect(got.headers['x-api-key']).toBe(API_KEY);
    expect(got.headers['x-shop']).toBe('acme');
    expect(got.headers.host).toBe(`127.0.0.1:${ep.port}`);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-answerdesk-user-id']).toBeUndefined();
    expect(anon.body.request.headers).toMatchObject({ 'x-api-key': '********', 'x-customer-token': '********', 'x-shop': 'acme' });
    // The endpoint echoes every header back: the values are masked in the shown response too.
    expect(anon.raw).not.toContain(API_KEY);
    expect(anon.raw).not.toContain(USER_TOKEN);
    expect(anon.body.response.forModel).toContain('********');

    const verified = await runTest(id, { userTokens: tokens, endUserId: 'Zoë 42' });
    expect(verified.body.ok).toBe(true);
    expect(ep.receivedAt('/echo/account').at(-1)!.headers['x-answerdesk-user-id']).toBe('Zo%C3%AB%2042');

    const rows = await t.deps.store.db.selectFrom('action_calls').selectAll().where('action_id', '=', id).execute();
    expect(rows).toHaveLength(2);
    const everything = JSON.stringify(rows) + logs.join('');
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(USER_TOKEN);
    expect(logs.join('')).toContain('"action":"account_echo"');
  });

  it('does not carry configured headers or user tokens across a redirect to another origin', async () => {
    const id = await define({
      name: 'moved',
      description: 'Follows a redirect',
      url: `${ep.base}/redirect`,
      headers: { 'X-Api-Key': API_KEY },
      parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    });
    const same = await runTest(id, { arguments: { to: '/echo/same-origin' }, userTokens: { 'X-Customer-Token': USER_TOKEN } });
    expect(same.body.ok).toBe(true);
    expect(ep.receivedAt('/echo/same-origin').at(-1)!.headers).toMatchObject({ 'x-api-key': API_KEY, 'x-customer-token': USER_TOKEN });

    const cross = await runTest(id, { arguments: { to: `${other.base}/echo/cross` }, userTokens: { 'X-Customer-Token': USER_TOKEN } });
    expect(cross.body.ok).toBe(true);
    const landed = other.receivedAt('/echo/cross').at(-1)!;
    expect(landed.headers['x-api-key']).toBeUndefined();
    expect(landed.headers['x-customer-token']).toBeUndefined();
    expect(landed.headers.accept).toContain('application/json');
  });

  it('reports timeouts, 4xx/5xx answers and oversize bodies', async () => {
    const id = await define({
      name: 'flaky',
      description: 'Sometimes slow',
      url: `${ep.base}/{path}`,
      timeoutMs: 200,
      parameters: { type: 'object', properties: { path: { type: 'string', enum: ['slow', 'big', 'text', 'missing'] }, code: { type: 'string' } }, required: ['path'] },
    });
    const slow = await runTest(id, { arguments: { path: 'slow' } });
    expect(slow.body).toMatchObject({ ok: false, response: null, error: { code: 'timeout', message: 'Timed out after 200 ms' } });

    const status = await define({
      name: 'status_code',
      description: 'Answers with a status',
      url: `${ep.base}/status/{code}`,
      parameters: { type: 'object', properties: { code: { type: 'integer' } }, required: ['code'] },
    });
    const unavailable = await runTest(status, { arguments: { code: 503 } });
    expect(unavailable.body).toMatchObject({ ok: false, error: null, response: { status: 503 } });
    expect(unavailable.body.response.forModel).toContain('failure 503');
    const notFound = await runTest(status, { arguments: { code: 404 } });
    expect(notFound.body.response.status).toBe(404);

    await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}/actions/${id}`, headers: adminAuth(), payload: { timeoutMs: 10_000 } });
    const big = await runTest(id, { arguments: { path: 'big' } });
    expect(big.body.ok).toBe(true);
    expect(big.body.response.truncated).toBe(true);
    expect(big.body.response.body.length).toBe(64 * 1024);
    expect(big.body.response.forModel.length).toBeLessThanOrEqual(MAX_MODEL_CHARS);
    expect(big.body.response.forModel.endsWith('…[truncated]')).toBe(true);

    const text = await runTest(id, { arguments: { path: 'text' } });
    expect(text.body.response.forModel).toBe('Invoice INV-7 was resent.\n\nThank you.');

    const calls = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/actions/${status}/calls`, headers: adminAuth() });
    expect(calls.json().calls.map((c: { error: string | null; status: number }) => [c.status, c.error])).toEqual([
      [404, 'HTTP 404'],
      [503, 'HTTP 503'],
    ]);
    const flaky = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/actions/${id}/calls?limit=2`, headers: adminAuth() });
    const page = flaky.json();
    expect(page.calls).toHaveLength(2);
    const rest = await t.app.inject({
      method: 'GET',
      url: `/api/v1/admin/projects/${p.project.id}/actions/${id}/calls?limit=2&cursor=${page.nextCursor}`,
      headers: adminAuth(),
    });
    expect(rest.json().calls).toHaveLength(1);
    expect(rest.json().calls[0]).toMatchObject({ outcome: 'error', error: 'Timed out after 200 ms', status: null });
    expect(rest.json().nextCursor).toBeUndefined();
  });
});

describe.each(dialects)('the SSRF guard on action calls on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let ep: ActionEndpoint;

  beforeAll(async () => {
    ep = await startActionEndpoint();
    // Guard on: ANSWERDESK_ALLOW_PRIVATE_NETWORK is not set.
    t = await createTestApp({ dialect, env: { ANSWERDESK_SECRET_KEY: SECRET_KEY } });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    p = await createProject(t);
  });
  afterAll(async () => {
    await t.close();
    await ep.close();
  });

  /**
   * An action on the loopback test endpoint, created past the URL check: with the guard on, the admin
   * API refuses such a URL at creation (tested below), and these tests are about what the call guard does.
   */
  async function define(input: Pick<ActionInput, 'name' | 'description' | 'url'> & Partial<ActionInput>): Promise<string> {
    const defaults = { method: 'GET' as const, headers: {}, parameters: { type: 'object', properties: {} }, examples: [], timeoutMs: 5000, enabled: true };
    return (await createAction(t.deps.store.db, secretBox(t.config), p.project.id, { ...defaults, ...input }, { allowPrivateNetwork: true })).id;
  }

  it('refuses a private or loopback URL, or localhost, when the action is created or its URL changed', async () => {
    const base = `/api/v1/admin/projects/${p.project.id}/actions`;
    const before = ep.received.length;
    const refusal = { error: 'Validation error', details: [{ path: 'url', message: 'must not point at a private, loopback or link-local address' }] };
    const urls = [`${ep.base}/echo/{id}`, `http://[::1]:${ep.port}/echo`, `http://localhost:${ep.port}/echo`, 'http://orders.localhost/x', 'http://169.254.169.254/latest', 'http://10.1.2.3/x'];
    for (const url of urls) {
      const parameters = url.includes('{id}') ? { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } : undefined;
      const res = await t.app.inject({ method: 'POST', url: base, headers: adminAuth(), payload: { name: 'local', description: 'Local', url, ...(parameters ? { parameters } : {}) } });
      expect([url, res.statusCode, res.json()]).toEqual([url, 400, refusal]);
    }
    expect(await t.deps.store.db.selectFrom('actions').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
    // Other names are not resolved at creation; a change to a refused URL is refused and stores nothing.
    const created = await t.app.inject({ method: 'POST', url: base, headers: adminAuth(), payload: { name: 'remote', description: 'Remote', url: 'https://api.example.com/orders' } });
    expect(created.statusCode).toBe(201);
    const id = created.json().action.id as string;
    const moved = await t.app.inject({ method: 'PATCH', url: `${base}/${id}`, headers: adminAuth(), payload: { url: `http://127.0.0.1:${ep.port}/orders` } });
    expect([moved.statusCode, moved.json()]).toEqual([400, refusal]);
    expect((await t.deps.store.db.selectFrom('actions').select('url').where('id', '=', id).executeTakeFirstOrThrow()).url).toBe('https://api.example.com/orders');
    // A URL sent back unchanged (the dashboard sends the whole form) is not judged again: the demo's
    // order look-up is this server's own loopback endpoint.
    const local = await define({ name: 'own_endpoint', description: 'Own', url: `${ep.base}/echo/own` });
    const edited = await t.app.inject({ method: 'PATCH', url: `${base}/${local}`, headers: adminAuth(), payload: { url: `${ep.base}/echo/own`, description: 'Edited' } });
    expect([edited.statusCode, edited.json().action.description]).toEqual([200, 'Edited']);
    expect(ep.received.slice(before)).toEqual([]);
  });

  it('refuses a loopback endpoint', async () => {
    const id = await define({ name: 'local', description: 'Local', url: `${ep.base}/echo/guarded` });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/actions/${id}/test`, headers: adminAuth(), payload: {} });
    expect(res.json()).toMatchObject({ ok: false, error: { code: 'blocked_address' }, response: null });
    expect(ep.receivedAt('/echo/guarded')).toEqual([]);
  });

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://127.0.0.2:{port}/echo/inner', 'http://[::ffff:10.0.0.1]/'])(
    'refuses a redirect from an allowed endpoint to %s',
    async (target) => {
      const id = await define({
        name: `bounce_${Math.abs(target.length)}_${target.charCodeAt(7)}`,
        description: 'Redirects',
        url: `${ep.base}/redirect`,
        headers: { 'X-Api-Key': API_KEY },
        parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
      });
      const action = await loadAction(t.deps.store.db, secretBox(t.config), p.project.id, id);
      const before = ep.received.length;
      // Only the test server's own address passes: the first hop is allowed, the redirect is not.
      const result = await executeAction(action, { to: target.replace('{port}', String(ep.port)) }, {
        config: t.config,
        db: t.deps.store.db,
        source: 'test',
        identity: { endUser: null, userTokens: {} },
        addressPolicy: (address) => address === '127.0.0.1',
      });
      expect(result).toMatchObject({ ok: false, response: null, error: { code: 'blocked_address' } });
      expect(ep.received.slice(before).map((r) => r.rawUrl.split('?')[0])).toEqual(['/redirect']);
    },
  );
});
