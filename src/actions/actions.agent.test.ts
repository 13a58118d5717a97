import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../test/fakes/action-endpoint.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { opensslHmac } from '../../test/identity.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import type { CreatedProject } from '../projects/projects.js';
import { secretContext } from './definition.js';
import { secretBox } from '../lib/secret-box.js';

const API_KEY = 'configured-api-key-7f3a9c';
const USER_TOKEN = 'user-session-token-5d2e81';
const SECRET_KEY = 'test-secret-key-for-actions-0123456789';

/** The agent calling actions: through a real provider and a fake model server, and through the builtin model. */
describe.each(dialects)('actions in answers on $name', (dialect) => {
  let t: TestApp;
  let ep: ActionEndpoint;
  let fake: FakeOpenAICompatible;
  let viaFake: CreatedProject;
  let viaBuiltin: CreatedProject;
  const logs: string[] = [];

  const trackOrder = () => ({
    name: 'track_order',
    description: 'Look up where an order is.',
    url: `${ep.base}/orders/{orderNumber}`,
    headers: { 'X-Api-Key': API_KEY },
    parameters: {
      type: 'object',
      properties: { orderNumber: { type: 'string', pattern: '^A-\\d{4}$', description: 'Order number' } },
      required: ['orderNumber'],
    },
    examples: ['where is my package', 'has my parcel shipped yet'],
  });

  beforeAll(async () => {
    ep = await startActionEndpoint();
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({
      dialect,
      env: {
        ANSWERDESK_SECRET_KEY: SECRET_KEY,
        ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true',
        OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
        OPENAI_COMPATIBLE_API_KEY: 'sk-fake',
      },
      logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
    });
  });
  afterAll(async () => {
    await t.close();
    await ep.close();
    await fake.close();
  });
  // Each test its own projects with one action each: an action a test adds is not offered in the next.
  beforeEach(async () => {
    viaFake = await createProject(t, { model: 'openai-compatible:fake' }, 'Fake');
    viaBuiltin = await createProject(t, { model: 'builtin' }, 'Builtin');
    for (const p of [viaFake, viaBuiltin]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/actions`, headers: adminAuth(), payload: trackOrder() });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  async function conversation(p: CreatedProject, endUserExternalId?: string): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: endUserExternalId ? { endUserExternalId } : {} });
    return res.json().conversationId;
  }

  async function send(p: CreatedProject, conversationId: string, content: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey, headers),
      payload: { conversationId, messages: [{ role: 'user', content }], ...extra },
    });
    expect(res.statusCode, res.body).toBe(200);
    return parseAnswer(res.body);
  }

  const stored = (conversationId: string) =>
    t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq', 'asc').execute();

  it('runs a model tool call with this request’s user tokens and shows it as tool parts', async () => {
    const id = await conversation(viaFake);
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-1234' } }] }, { text: 'Your order A-1234 has shipped with DHL.' });
    const before = ep.received.length;
    const { chunks, message, raw } = await send(viaFake, id, 'Where is order A-1234?', { userTokens: { 'X-Customer-Token': USER_TOKEN } });

    // The model was offered the action as a tool with its schema and examples.
    const offered = fake.requests.at(-2)!.body.tools.find((x: { function: { name: string } }) => x.function.name === 'track_order');
    expect(offered.function.parameters).toMatchObject({ required: ['orderNumber'] });
    expect(offered.function.description).toContain('"where is my package"');

    const calls = ep.received.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: 'GET', rawUrl: '/orders/A-1234' });
    expect(calls[0]!.headers['x-customer-token']).toBe(USER_TOKEN);
    expect(calls[0]!.headers['x-api-key']).toBe(API_KEY);
    expect(calls[0]!.headers['x-answerdesk-user-id']).toBeUndefined();

    expect(chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'track_order', input: { orderNumber: 'A-1234' } });
    expect(chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { status: 200, ok: true, body: { id: 'A-1234', status: 'shipped' } } });
    expect(message?.parts.find((part) => part.type === 'tool-track_order')).toMatchObject({ state: 'output-available' });
    expect(streamedText(chunks)).toBe('Your order A-1234 has shipped with DHL.');

    // The model read the result on its second step; no secret went along.
    const second = JSON.stringify(fake.requests.at(-1)!.body);
    expect(second).toContain('shipped');
    for (const text of [second, JSON.stringify(fake.requests.at(-2)!.body), raw]) {
      expect(text).not.toContain(USER_TOKEN);
      expect(text).not.toContain(API_KEY);
    }

    const rows = await stored(id);
    const assistant = rows.find((r) => r.role === 'assistant')!;
    expect(JSON.parse(assistant.parts!)).toContainEqual(expect.objectContaining({ type: 'tool-track_order', state: 'output-available' }));
    expect(JSON.stringify(rows)).not.toContain(USER_TOKEN);
    const log = await t.deps.store.db.selectFrom('action_calls').selectAll().where('conversation_id', '=', id).execute();
    expect(log).toMatchObject([{ source: 'agent', outcome: 'ok', http_status: 200, error: null }]);
  });

  it('masks a secret or token that an endpoint echoes before the model, the stream or the store see it', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${viaFake.project.id}/actions`,
      headers: adminAuth(),
      payload: { name: 'whoami', description: 'Show the account', method: 'POST', url: `${ep.base}/echo/whoami`, headers: { 'X-Api-Key': API_KEY } },
    });
    expect(created.statusCode).toBe(201);
    const id = await conversation(viaFake);
    fake.enqueue({ toolCalls: [{ name: 'whoami', arguments: {} }] }, { text: 'Done.' });
    const { raw, chunks } = await send(viaFake, id, 'Who am I?', { userTokens: { 'X-Customer-Token': USER_TOKEN } });
    const got = ep.receivedAt('/echo/whoami').at(-1)!;
    expect(got.headers).toMatchObject({ 'x-api-key': API_KEY, 'x-customer-token': USER_TOKEN });
    const output = chunks.find((c) => c.type === 'tool-output-available') as { output: { body: { headers: Record<string, string> } } };
    expect(output.output.body.headers).toMatchObject({ 'x-api-key': '********', 'x-customer-token': '********' });
    const stored = JSON.stringify(await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', id).execute());
    expect(stored).toContain('********');
    for (const text of [raw, stored, JSON.stringify(fake.requests.at(-1)!.body)]) {
      expect(text).not.toContain(USER_TOKEN);
      expect(text).not.toContain(API_KEY);
    }
  });

  it('forwards user tokens only on the calls of the request that sent them', async () => {
    const id = await conversation(viaFake);
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-2001' } }] }, { text: 'First.' });
    await send(viaFake, id, 'Track A-2001', { userTokens: { 'X-Customer-Token': USER_TOKEN } });
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-2002' } }] }, { text: 'Second.' });
    await send(viaFake, id, 'And A-2002?');
    const first = ep.receivedAt('/orders/A-2001').at(-1)!;
    const second = ep.receivedAt('/orders/A-2002').at(-1)!;
    expect(first.headers['x-customer-token']).toBe(USER_TOKEN);
    expect(second.headers['x-customer-token']).toBeUndefined();
    expect(second.headers['x-api-key']).toBe(API_KEY);
  });

  it('sends the end user id only when this request proved it', async () => {
    const id = await conversation(viaFake, 'cust-77');
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-3001' } }] }, { text: 'ok' });
    await send(viaFake, id, 'Track A-3001', {}, { 'x-user-hmac': opensslHmac(viaFake.hmacSecret, 'cust-77') });
    expect(ep.receivedAt('/orders/A-3001').at(-1)!.headers['x-answerdesk-user-id']).toBe('cust-77');
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: 'A-3002' } }] }, { text: 'ok' });
    await send(viaFake, id, 'Track A-3002');
    expect(ep.receivedAt('/orders/A-3002').at(-1)!.headers['x-answerdesk-user-id']).toBeUndefined();
  });

  it('returns invalid arguments to the model as a tool error without calling the endpoint', async () => {
    const id = await conversation(viaFake);
    fake.enqueue({ toolCalls: [{ name: 'track_order', arguments: { orderNumber: '../admin' } }] }, { text: 'Please give me a number like A-1234.' });
    const before = ep.received.length;
    const { chunks, message } = await send(viaFake, id, 'Track my order ../admin');
    expect(ep.received.length).toBe(before);
    // The client sees the call fail (with the agent's safe error text); the model reads why.
    expect(chunks.find((c) => c.type === 'tool-output-error')).toMatchObject({ errorText: expect.any(String) });
    expect(message?.parts.find((part) => part.type === 'tool-track_order')).toMatchObject({ state: 'output-error', input: { orderNumber: '../admin' } });
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain('Invalid arguments: orderNumber must match pattern');
    const log = await t.deps.store.db.selectFrom('action_calls').selectAll().where('conversation_id', '=', id).execute();
    expect(log).toMatchObject([{ outcome: 'error', http_status: null }]);
  });

  it('builtin model: asks for a missing order number, then uses the reply', async () => {
    const id = await conversation(viaBuiltin);
    const before = ep.received.length;
    const ask = await send(viaBuiltin, id, 'Where is my package?', { userTokens: { 'X-Customer-Token': USER_TOKEN } });
    expect(streamedText(ask.chunks)).toBe('To look up where an order is, I need your order number. Could you tell me?');
    expect(ep.received.length).toBe(before);

    const answer = await send(viaBuiltin, id, "It's A-4821.", { userTokens: { 'X-Customer-Token': USER_TOKEN } });
    const got = ep.receivedAt('/orders/A-4821').at(-1)!;
    expect(got.headers['x-customer-token']).toBe(USER_TOKEN);
    expect(answer.chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'track_order', input: { orderNumber: 'A-4821' } });
    const text = streamedText(answer.chunks);
    expect(text).toContain('- Status: shipped');
    expect(text).toContain('- Carrier: DHL');
    expect(text).toContain('sku: MUG-1, qty: 2');

    const rows = await stored(id);
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(rows[3]!.content).toBe(text);
    expect(JSON.stringify(rows)).not.toContain(USER_TOKEN);
    expect(JSON.stringify(rows)).not.toContain(API_KEY);
  });

  it('builtin model: calls at once when the message has what it needs, and explains a 404', async () => {
    const id = await conversation(viaBuiltin);
    const found = await send(viaBuiltin, id, 'Has my parcel a-1234 shipped yet?');
    expect(streamedText(found.chunks)).toContain('- Id: A-1234');
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/projects/${viaBuiltin.project.id}/actions/${(await t.deps.store.db.selectFrom('actions').select('id').where('project_id', '=', viaBuiltin.project.id).executeTakeFirstOrThrow()).id}`,
      headers: adminAuth(),
      payload: { url: `${ep.base}/status/{orderNumber}`, parameters: { type: 'object', properties: { orderNumber: { type: 'string', pattern: '^\\d{3}$' } }, required: ['orderNumber'] } },
    });
    const missing = await send(viaBuiltin, id, 'Where is my package 404?');
    expect(streamedText(missing.chunks)).toBe("I couldn't look up where an order is: failure 404. Could you check the details you gave me?");
  });

  it('builtin model: one word of an action’s name starts no action; two signs, or a value it takes, do', async () => {
    const before = ep.received.length;
    for (const text of ['How do I change the order of the columns?', 'How do I track my spending?']) {
      const id = await conversation(viaBuiltin);
      const answer = await send(viaBuiltin, id, text);
      const said = streamedText(answer.chunks);
      expect(said, text).not.toMatch(/order number|look up where an order is/i);
      expect(answer.chunks.some((c) => c.type === 'tool-input-available' && c.toolName === 'track_order'), text).toBe(false);
      expect((await stored(id)).map((r) => r.outcome), text).toEqual([null, 'declined']);
    }
    expect(ep.received.length).toBe(before);

    const id = await conversation(viaBuiltin);
    const track = await send(viaBuiltin, id, 'Please track order a-1234');
    expect(track.chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'track_order', input: { orderNumber: 'A-1234' } });
    expect((await stored(id)).map((r) => r.outcome)).toEqual([null, 'action']);
    const mine = await send(viaBuiltin, await conversation(viaBuiltin), 'Where is my order A-2001?');
    expect(mine.chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'track_order', input: { orderNumber: 'A-2001' } });
  });

  it('builtin model: asks for a parameter whose description is not a noun phrase by its name, quoting the description', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${viaBuiltin.project.id}/actions`,
      headers: adminAuth(),
      payload: {
        name: 'report_damage',
        description: 'Report a damaged delivery.',
        method: 'POST',
        url: `${ep.base}/echo/damage`,
        parameters: {
          type: 'object',
          properties: { summary: { type: 'string', description: 'What arrived broken, in one sentence.' } },
          required: ['summary'],
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = await conversation(viaBuiltin);
    const ask = await send(viaBuiltin, id, 'I want to report a damaged delivery');
    expect(streamedText(ask.chunks)).toBe('To report a damaged delivery, I need the summary ("What arrived broken, in one sentence."). Could you tell me?');

    await send(viaBuiltin, id, 'The blue mug came in pieces.');
    expect(JSON.parse(ep.receivedAt('/echo/damage').at(-1)!.body)).toEqual({ summary: 'The blue mug came in pieces' });
    expect((await stored(id)).map((r) => r.outcome)).toEqual([null, 'answered', null, 'action']);
  });

  it('offers only enabled actions, and leaves out one whose secret no longer opens', async () => {
    const make = async (name: string, extra: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/admin/projects/${viaFake.project.id}/actions`,
        headers: adminAuth(),
        payload: { name, description: name, url: `${ep.base}/echo/${name}`, ...extra },
      });
      return res.json().action.id as string;
    };
    await make('switched_off', { enabled: false });
    const broken = await make('sealed_elsewhere', { headers: { 'X-Api-Key': 'other-secret-value' } });
    // As if written by a node with another ANSWERDESK_SECRET_KEY.
    const foreign = secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: 'a different key, 16+ chars' });
    const headers = [{ name: 'X-Api-Key', secret: true, enc: foreign.seal('other-secret-value', secretContext(broken, 'X-Api-Key')) }];
    await t.deps.store.db.updateTable('actions').set({ headers: JSON.stringify(headers) }).where('id', '=', broken).execute();

    const id = await conversation(viaFake);
    fake.enqueue({ text: 'Hello.' });
    await send(viaFake, id, 'Hi');
    const offered = fake.requests.at(-1)!.body.tools.map((x: { function: { name: string } }) => x.function.name);
    expect(offered).toContain('track_order');
    expect(offered).not.toContain('switched_off');
    expect(offered).not.toContain('sealed_elsewhere');
    expect(logs.join('')).toContain('action left out: its secret headers cannot be decrypted');
  });

  it('keeps secrets and user tokens out of every log line', () => {
    const all = logs.join('');
    expect(all).toContain('"action":"track_order"');
    expect(all).not.toContain(USER_TOKEN);
    expect(all).not.toContain(API_KEY);
  });
});
