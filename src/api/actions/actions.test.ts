import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { secretContext, type StoredHeader } from '../../actions/definition.js';
import { secretBox } from '../../lib/secret-box.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { Action } from './schema.js';

const SECRET = 'sk_live_51H_very_secret_value';
export const TEST_SECRET_KEY = 'test-secret-key-for-actions-0123456789';

const orderLookup = {
  name: 'lookup_order',
  description: 'Look up an order by its number',
  method: 'GET',
  url: 'https://shop.example.com/orders/{orderId}',
  headers: { Authorization: `Bearer ${SECRET}`, Accept: 'application/json' },
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string', pattern: '^A-\\d{4}$', description: 'Order number like A-1234' } },
    required: ['orderId'],
  },
  examples: ['where is my order', 'track order A-1234'],
  timeoutMs: 5000,
};

/** A string schema wrapped `depth` times as the items of an array. */
const nested = (depth: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'array', items: schema };
  return schema;
};
/** A string schema wrapped `depth` times in `allOf`. */
const allOf = (depth: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { allOf: [schema] };
  return schema;
};

describe.each(dialects)('actions admin API on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let other: CreatedProject;
  const url = () => `/api/v1/admin/projects/${p.project.id}/actions`;

  beforeAll(async () => {
    t = await createTestApp({ dialect, env: { ANSWERDESK_SECRET_KEY: TEST_SECRET_KEY } });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    p = await createProject(t);
    other = await createProject(t, {}, 'Other');
  });
  afterAll(() => t.close());

  async function create(body: Record<string, unknown>, headers = adminAuth()) {
    return t.app.inject({ method: 'POST', url: url(), headers, payload: body });
  }

  it('creates an action, masks the secret header and stores it only encrypted', async () => {
    const res = await create(orderLookup);
    expect(res.statusCode).toBe(201);
    const { action } = res.json() as { action: Action };
    expect(action).toMatchObject({
      name: 'lookup_order',
      method: 'GET',
      projectId: p.project.id,
      enabled: true,
      query: null,
      body: null,
      timeoutMs: 5000,
      headers: { Authorization: { value: '********', secret: true }, Accept: { value: 'application/json', secret: false } },
    });
    expect(action.id).toMatch(/^act_[0-9A-Za-z]{22}$/);
    expect(res.body).not.toContain(SECRET);

    const row = await t.deps.store.db.selectFrom('actions').selectAll().where('id', '=', action.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(JSON.stringify(row)).not.toContain('very_secret');
    const stored = JSON.parse(row.headers) as StoredHeader[];
    const authHeader = stored.find((h) => h.name === 'Authorization')!;
    expect(authHeader.secret).toBe(true);
    // The envelope opens with the configured key, and only in its own place.
    const box = secretBox(t.config);
    expect(box.open((authHeader as { enc: string }).enc, secretContext(action.id, 'Authorization'))).toBe(`Bearer ${SECRET}`);
    expect(() => box.open((authHeader as { enc: string }).enc, secretContext('act_other', 'Authorization'))).toThrow();

    const read = await t.app.inject({ method: 'GET', url: `${url()}/${action.id}`, headers: adminAuth() });
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toContain(SECRET);
    const list = await t.app.inject({ method: 'GET', url: url(), headers: auth(p.secretKey) });
    expect(list.json().actions.map((a: Action) => a.name)).toContain('lookup_order');
    expect(list.body).not.toContain(SECRET);
  });

  it('refuses a second action with the same name (409), also when renaming', async () => {
    expect((await create(orderLookup)).statusCode).toBe(201);
    const dup = await create(orderLookup);
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'An action named "lookup_order" already exists in this project' });
    // Another project may use the same name.
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${other.project.id}/actions`,
      headers: adminAuth(),
      payload: orderLookup,
    });
    expect(elsewhere.statusCode).toBe(201);

    const second = await create({ ...orderLookup, name: 'second_action', headers: {} });
    const rename = await t.app.inject({
      method: 'PATCH',
      url: `${url()}/${second.json().action.id}`,
      headers: adminAuth(),
      payload: { name: 'lookup_order' },
    });
    expect(rename.statusCode).toBe(409);
  });

  it.each([
    ['a bad tool name', { name: 'look up' }, 'name'],
    ['a name over 64 characters', { name: `a${'b'.repeat(64)}` }, 'name'],
    ['parameters not of type object', { parameters: { type: 'string' } }, 'parameters.type'],
    ['an unknown JSON Schema keyword', { parameters: { type: 'object', properties: { orderId: { type: 'string' } }, requird: ['orderId'] } }, 'parameters'],
    ['an invalid type name', { parameters: { type: 'object', properties: { orderId: { type: 'text' } }, required: ['orderId'] } }, 'parameters.properties.orderId.type'],
    ['a broken regular expression', { parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '(' } }, required: ['orderId'] } }, 'parameters'],
    ['an unknown format', { parameters: { type: 'object', properties: { orderId: { type: 'string', format: 'order-number' } }, required: ['orderId'] } }, 'parameters'],
    // ajv compiles by recursion: a schema nested a thousand times deep (well under 32 KiB) overflowed its stack, a 500.
    ['a schema nested a thousand times deep', { parameters: { type: 'object', properties: { orderId: nested(1000) }, required: ['orderId'] } }, 'parameters'],
    ['a schema nested deep through allOf', { parameters: { type: 'object', properties: { orderId: allOf(1500) }, required: ['orderId'] } }, 'parameters'],
    ['a placeholder that is not a parameter', { url: 'https://shop.example.com/orders/{id}' }, 'url'],
    ['a placeholder that is not required', { parameters: { type: 'object', properties: { orderId: { type: 'string' } } } }, 'parameters.required'],
    ['a placeholder in the host', { url: 'https://{orderId}.example.com/x' }, 'url'],
    ['a non-http URL', { url: 'ftp://example.com/{orderId}' }, 'url'],
    ['credentials in the URL', { url: 'https://user:pw@example.com/{orderId}' }, 'url'],
    ['a stray brace', { url: 'https://example.com/{orderId}/{' }, 'url'],
    ['a Host header', { headers: { Host: 'internal' } }, 'headers.Host'],
    ['the user-id header', { headers: { 'X-AnswerDesk-User-Id': 'someone' } }, 'headers.X-AnswerDesk-User-Id'],
    ['a header value with a line break', { headers: { 'X-Note': 'a\r\nX-Injected: 1' } }, 'headers.X-Note'],
    ['a GET with a body mapping', { body: ['orderId'] }, 'body'],
    ['a query entry that is not a parameter', { query: ['nope'] }, 'query.0'],
    ['a timeout over the bound', { timeoutMs: 60_000 }, 'timeoutMs'],
    ['an unknown field', { retries: 3 }, ''],
  ])('refuses %s with 400 and details', async (_, change, path) => {
    const res = await create({ ...orderLookup, name: 'bad_one', ...change });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error).toBe('Validation error');
    expect(body.details.length).toBeGreaterThan(0);
    if (path) expect(body.details.map((d: { path: string }) => d.path)).toContain(path);
    const stored = await t.deps.store.db.selectFrom('actions').select('id').where('name', '=', 'bad_one').execute();
    expect(stored).toEqual([]);
  });

  it('updates: the mask keeps a secret, a new value replaces it, null restores default mapping', async () => {
    const created = await create({
      ...orderLookup,
      name: 'patch_me',
      method: 'POST',
      url: 'https://shop.example.com/orders/{orderId}/resend',
      headers: { 'X-Api-Key': { value: 'key-one-123456', secret: true }, 'X-Plain': 'visible' },
      parameters: {
        type: 'object',
        properties: { orderId: { type: 'string' }, email: { type: 'string', format: 'email' } },
        required: ['orderId'],
      },
      query: ['email'],
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().action.id;
    const patch = (payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: `${url()}/${id}`, headers: adminAuth(), payload });
    const box = secretBox(t.config);
    const storedKey = async () => {
      const row = await t.deps.store.db.selectFrom('actions').select('headers').where('id', '=', id).executeTakeFirstOrThrow();
      const h = (JSON.parse(row.headers) as StoredHeader[]).find((x) => x.name === 'X-Api-Key') as { enc: string } | undefined;
      return h ? box.open(h.enc, secretContext(id, 'X-Api-Key')) : null;
    };

    const kept = await patch({ headers: { 'X-Api-Key': '********', 'X-Plain': 'changed' }, description: 'Resend the invoice' });
    expect(kept.statusCode).toBe(200);
    expect(kept.json().action).toMatchObject({
      description: 'Resend the invoice',
      headers: { 'X-Api-Key': { value: '********', secret: true }, 'X-Plain': { value: 'changed', secret: false } },
    });
    expect(await storedKey()).toBe('key-one-123456');

    expect((await patch({ headers: { 'X-Api-Key': 'key-two-654321' } })).statusCode).toBe(200);
    expect(await storedKey()).toBe('key-two-654321');

    const maskWithoutSecret = await patch({ headers: { 'X-Other-Token': '********' } });
    expect(maskWithoutSecret.statusCode).toBe(400);

    // The mask read back, sent as public: it would have replaced the secret with "********".
    const maskMadePublic = await patch({ headers: { 'X-Api-Key': { value: '********', secret: false } } });
    expect(maskMadePublic.statusCode).toBe(400);
    expect(maskMadePublic.json().details).toEqual([
      { path: 'headers.X-Api-Key', message: '"********" is the mask of this header\'s stored secret; to make the header public, send its real value' },
    ]);
    expect(await storedKey()).toBe('key-two-654321');
    // With its real value a secret header becomes public.
    const madePublic = await patch({ headers: { 'X-Api-Key': { value: 'key-two-654321', secret: false } } });
    expect(madePublic.json().action.headers).toEqual({ 'X-Api-Key': { value: 'key-two-654321', secret: false } });
    expect((await patch({ headers: { 'X-Api-Key': { value: 'key-three-987654', secret: true } } })).statusCode).toBe(200);
    // A header made secret by hand, its name no credential's: the mask in the short form keeps it.
    expect((await patch({ headers: { 'X-Api-Key': '********', 'X-Shop-Id': { value: 'shop-123456', secret: true } } })).statusCode).toBe(200);
    const shortForm = await patch({ headers: { 'X-Api-Key': '********', 'X-Shop-Id': '********' } });
    expect(shortForm.statusCode).toBe(200);
    expect(shortForm.json().action.headers).toEqual({ 'X-Api-Key': { value: '********', secret: true }, 'X-Shop-Id': { value: '********', secret: true } });
    expect(await storedKey()).toBe('key-three-987654');

    const reset = await patch({ query: null, enabled: false, timeoutMs: 250 });
    expect(reset.json().action).toMatchObject({ query: null, enabled: false, timeoutMs: 250 });
    // The merged definition is checked as a whole: the URL still needs orderId.
    const broken = await patch({ parameters: { type: 'object', properties: {} } });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().details[0]).toMatchObject({ path: 'url' });
  });

  it('deletes an action with its call log', async () => {
    const created = await create({ ...orderLookup, name: 'to_delete', headers: {} });
    const id = created.json().action.id;
    await t.deps.store.db
      .insertInto('action_calls')
      .values({ id: 'call_x' + id.slice(4, 12), project_id: p.project.id, action_id: id, conversation_id: null, source: 'test', outcome: 'ok', http_status: 200, latency_ms: 3, error: null, created_at: new Date().toISOString() })
      .execute();
    const del = await t.app.inject({ method: 'DELETE', url: `${url()}/${id}`, headers: adminAuth() });
    expect(del.statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: `${url()}/${id}`, headers: adminAuth() })).json()).toEqual({ error: 'Action not found' });
    expect(await t.deps.store.db.selectFrom('action_calls').select('id').where('action_id', '=', id).execute()).toEqual([]);
    expect((await t.app.inject({ method: 'DELETE', url: `${url()}/${id}`, headers: adminAuth() })).statusCode).toBe(404);
  });

  it("keeps projects apart: another project's secret key gets 404, a public key 401", async () => {
    const created = await create({ ...orderLookup, name: 'private_one', headers: {} });
    const id = created.json().action.id;
    const foreign = await t.app.inject({ method: 'GET', url: `${url()}/${id}`, headers: auth(other.secretKey) });
    expect(foreign.statusCode).toBe(404);
    const foreignList = await t.app.inject({ method: 'GET', url: url(), headers: auth(other.secretKey) });
    expect(foreignList.statusCode).toBe(404);
    // The action id alone does not reach it through the other project's path either.
    const crossPath = await t.app.inject({
      method: 'GET',
      url: `/api/v1/admin/projects/${other.project.id}/actions/${id}`,
      headers: auth(other.secretKey),
    });
    expect(crossPath.json()).toEqual({ error: 'Action not found' });
    const pub = await t.app.inject({ method: 'GET', url: url(), headers: auth(p.publicKey) });
    expect(pub.statusCode).toBe(401);
  });
});
