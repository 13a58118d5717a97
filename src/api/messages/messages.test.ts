import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { chunkTypes, parseAnswer, streamedText } from '../../../test/ui-stream.js';
import { signUserId } from '../../lib/keys.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { SendMessageBody } from './schema.js';

describe.each(dialects)('POST /chat/messages on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(() => t.close());
  // Each test its own projects: no test sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t);
    b = await createProject(t, {}, 'Beta');
  });

  async function conversation(p: CreatedProject, endUserExternalId?: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(p.publicKey, headers),
      payload: endUserExternalId ? { endUserExternalId } : undefined,
    });
    expect(res.statusCode).toBe(201);
    return res.json().conversationId;
  }

  const send = (key: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/chat/messages', headers: auth(key, headers), payload: payload as object });

  const user = (content: string): SendMessageBody['messages'][number] => ({ role: 'user', content });

  const rows = (conversationId: string) =>
    t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();

  it('streams a builtin answer and stores both turns with counts, preview and role', async () => {
    const fresh = await createProject(t);
    const id = await conversation(fresh, 'alice');
    const res = await send(fresh.publicKey, { conversationId: id, projectId: fresh.project.id, messages: [user('Hello!')] }, { origin: 'https://shop.test' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    expect(res.headers['x-ratelimit-remaining']).toBe('29');
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.test');
    expect(String(res.headers['access-control-expose-headers'])).toContain('x-vercel-ai-ui-message-stream');

    const { chunks, message, raw } = await parseAnswer(res.body);
    expect(chunkTypes(chunks)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(3);
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const start = chunks[0] as { messageId: string; messageMetadata: unknown };
    expect(start.messageMetadata).toEqual({ conversationId: id });
    const text = streamedText(chunks);
    expect(text).toMatch(/^Hi! I'm the Acme assistant\./);

    const stored = await rows(id);
    expect(stored.map((r) => [r.role, r.seq, r.status])).toEqual([
      ['user', 1, 'complete'],
      ['assistant', 2, 'complete'],
    ]);
    expect(stored[0].content).toBe('Hello!');
    expect(stored[1]).toMatchObject({ id: start.messageId, content: text, model: 'builtin' });
    expect(JSON.parse(stored[1].usage!)).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(JSON.parse(stored[1].parts!)).toEqual(message!.parts.filter((p) => p.type !== 'step-start'));

    const conv = await t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(conv).toMatchObject({ message_count: 2, last_message_role: 'ASSISTANT', last_message_preview: text.slice(0, 150) });
    expect(conv.updated_at).toBe(stored[1].created_at);

    const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=alice', headers: auth(fresh.publicKey) });
    expect(list.json().conversations).toEqual([expect.objectContaining({ id, messageCount: 2, lastMessageRole: 'ASSISTANT' })]);
    const history = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(fresh.publicKey) });
    expect(history.json().messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Hello!'],
      ['assistant', text],
    ]);
  });

  it('the builtin model greets with the whole project name, whatever punctuation it holds', async () => {
    const named = await createProject(t, {}, 'Acme Inc. Europe');
    const id = await conversation(named);
    const res = await send(named.publicKey, { conversationId: id, messages: [user('Hello!')] });
    expect(res.statusCode).toBe(200);
    expect(streamedText((await parseAnswer(res.body)).chunks)).toMatch(/^Hi! I'm the Acme Inc\. Europe assistant\./);
  });

  it('takes the text from parts, treats only the last message as new and keeps the stored history', async () => {
    const id = await conversation(a);
    const res = await send(a.secretKey, {
      conversationId: id,
      messages: [
        { role: 'user', content: 'an old question the client kept' },
        { role: 'assistant', content: 'an answer the server never gave' },
        { role: 'user', id: 'client-1', parts: [{ type: 'text', text: 'thank ' }, { type: 'step-start' }, { type: 'text', text: 'you' }] },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(streamedText((await parseAnswer(res.body)).chunks)).toMatch(/^You're welcome/);
    expect((await rows(id)).map((r) => [r.role, r.content.slice(0, 12)])).toEqual([
      ['user', 'thank you'],
      ['assistant', "You're welco"],
    ]);
  });

  it('says plainly what it cannot answer when it has no knowledge or actions', async () => {
    const id = await conversation(a);
    const res = await send(a.publicKey, { conversationId: id, messages: [user('What is the airspeed of an unladen swallow?')] });
    // With no knowledge tool it says it cannot answer; with an empty knowledge base, that it found nothing.
    expect(streamedText((await parseAnswer(res.body)).chunks)).toMatch(/I can't answer that|couldn't find anything about that/);
  });

  it('rejects every invalid body with 400 details and stores nothing', async () => {
    const id = await conversation(a);
    const long = (n: number) => 'x'.repeat(n);
    const cases: Array<[unknown, string]> = [
      [{ conversationId: id, messages: [] }, 'messages'],
      [{ conversationId: id }, 'messages'],
      [{ messages: [user('hi')] }, 'conversationId'],
      [{ conversationId: id, messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role'],
      [{ conversationId: id, messages: [{ role: 'user', content: 5 }] }, 'messages.0.content'],
      [{ conversationId: id, messages: [{ role: 'user', parts: [{ text: 'no type' }] }] }, 'messages.0.parts.0.type'],
      [{ conversationId: id, messages: [user('hi'), { role: 'assistant', content: 'last is not the user' }] }, 'messages.1.role'],
      [{ conversationId: id, messages: [user('   ')] }, 'messages.0.content'],
      [{ conversationId: id, messages: [{ role: 'user', parts: [{ type: 'file', url: 'x' }] }] }, 'messages.0.content'],
      [{ conversationId: id, messages: [user('hi')], userTokens: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-t${i}`, 'v'])) }, 'userTokens'],
      [{ conversationId: id, messages: [user('hi')], userTokens: { 'x-token': long(4097) } }, 'userTokens.x-token'],
      [{ conversationId: id, messages: [user('hi')], userTokens: { 'bad header': 'v' } }, 'userTokens.bad header'],
      [{ conversationId: id, messages: [user('hi')], userTokens: { 'x-token': 'a\r\nInjected: 1' } }, 'userTokens.x-token'],
      [{ conversationId: id, messages: [user('hi')], userTokens: { 'x-token': 5 } }, 'userTokens.x-token'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { textContent: long(10_001) } }, 'pageContext.textContent'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { headings: Array(31).fill('h') } }, 'pageContext.headings'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { buttons: Array(31).fill('b') } }, 'pageContext.buttons'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { links: Array(81).fill({ href: '/a', text: 'a' }) } }, 'pageContext.links'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { links: [{ href: long(2049), text: 'a' }] } }, 'pageContext.links.0.href'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { formFields: Array(21).fill({ name: 'f' }) } }, 'pageContext.formFields'],
      [{ conversationId: id, messages: [user('hi')], pageContext: { formFields: [{ name: 5 }] } }, 'pageContext.formFields.0.name'],
    ];
    for (const [payload, path] of cases) {
      const res = await send(a.publicKey, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 120)).toBe(400);
      const body = res.json();
      expect(body.error).toBe('Validation error');
      expect(body.details.map((d: { path: string }) => d.path), JSON.stringify(payload).slice(0, 120)).toContain(path);
    }
    // At the limits exactly, the same fields are accepted.
    const ok = await send(a.publicKey, {
      conversationId: id,
      messages: [user('hi')],
      userTokens: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-Token_${i}`, long(4096)])),
      pageContext: {
        textContent: long(10_000),
        headings: Array(30).fill('h'),
        buttons: Array(30).fill('b'),
        links: Array(80).fill({ href: long(2048), text: 'a' }),
        formFields: Array(20).fill({ name: 'n', type: 't', label: 'l', placeholder: 'p' }),
      },
    });
    expect(ok.statusCode).toBe(200);
    expect((await rows(id)).length).toBe(2);
  });

  it('answers 413 over 1 MiB and accepts a large body under it', async () => {
    const id = await conversation(a);
    const over = await send(a.publicKey, { conversationId: id, messages: [user('x'.repeat(1024 * 1024))] });
    expect(over.statusCode).toBe(413);
    expect(over.json()).toEqual({ error: 'Request body too large' });
    const under = await send(a.publicKey, { conversationId: id, messages: [user('y'.repeat(900 * 1024))] });
    expect(under.statusCode).toBe(200);
    const stored = await rows(id);
    expect(stored[0].content.length).toBe(900 * 1024);
  });

  it('checks projectId, the conversation and its expiry, storing nothing when refused', async () => {
    const id = await conversation(a);
    const foreignConv = await conversation(b);
    const expect400 = async (payload: unknown, error: string, status = 400) => {
      const res = await send(a.publicKey, payload);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ error });
      expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    };
    await expect400({ conversationId: id, projectId: 'proj_doesnotexist', messages: [user('hi')] }, 'Project not found', 404);
    await expect400({ conversationId: id, projectId: b.project.id, messages: [user('hi')] }, 'Project does not match API key', 403);
    await expect400({ conversationId: 'conv_unknown', messages: [user('hi')] }, 'Invalid conversation');
    await expect400({ conversationId: foreignConv, messages: [user('hi')] }, 'Invalid conversation');

    await t.deps.store.db.updateTable('conversations').set({ status: 'CLOSED' }).where('id', '=', id).execute();
    await expect400({ conversationId: id, messages: [user('hi')] }, 'Conversation expired');

    const idle = await conversation(a);
    await t.deps.store.db
      .updateTable('conversations')
      .set({ updated_at: new Date(Date.now() - 1441 * 60_000).toISOString() })
      .where('id', '=', idle)
      .execute();
    await expect400({ conversationId: idle, messages: [user('hi')] }, 'Conversation expired');

    for (const c of [id, idle, foreignConv]) expect(await rows(c)).toEqual([]);
    const leases = await t.deps.store.db.selectFrom('answer_leases').selectAll().where('conversation_id', 'in', [id, idle]).execute();
    expect(leases).toEqual([]);
  });

  it("takes over a conversation whose lease has expired (a node that died mid-answer), not one whose lease runs", async () => {
    const id = await conversation(a);
    const db = t.deps.store.db;
    const leaseOf = () => db.selectFrom('answer_leases').selectAll().where('conversation_id', '=', id).execute();
    // Another node holds the conversation: its answer still runs.
    const later = new Date(Date.now() + 60_000).toISOString();
    await db.insertInto('answer_leases').values({ conversation_id: id, token: 'other-node-live', expires_at: later }).execute();
    const busy = await send(a.publicKey, { conversationId: id, messages: [user('Hello!')] });
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toEqual({ error: 'Conversation is busy' });
    expect(await leaseOf()).toEqual([{ conversation_id: id, token: 'other-node-live', expires_at: later }]);
    expect(await rows(id)).toEqual([]);

    // That node died: its lease ran out, and the next send answers and lets go of the conversation.
    await db.updateTable('answer_leases').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('conversation_id', '=', id).execute();
    const res = await send(a.publicKey, { conversationId: id, messages: [user('Hello!')] });
    expect(res.statusCode).toBe(200);
    expect(streamedText((await parseAnswer(res.body)).chunks)).not.toBe('');
    expect((await rows(id)).map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    expect(await leaseOf()).toEqual([]);
  });

  it('401s without a key and counts sends in the chat bucket', async () => {
    const id = await conversation(a);
    const none = await t.app.inject({ method: 'POST', url: '/api/v1/chat/messages', payload: { conversationId: id, messages: [user('hi')] } });
    expect(none.statusCode).toBe(401);
    const p = await createProject(t, { rateLimits: { chat: 2 } });
    const conv = await conversation(p);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(p.publicKey, { conversationId: conv, messages: [user('hi')] })).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
    // Other runtime calls use their own bucket.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=x', headers: auth(p.publicKey) });
    expect(list.statusCode).toBe(200);
  });

  it('enforces identity on user-bound conversations and gives the verified user to the agent', async () => {
    const p = await createProject(t, { identityVerification: 'required' });
    const hmac = signUserId(p.hmacSecret, 'carol');
    const id = await conversation(p, 'carol', { 'x-user-hmac': hmac });
    const refused = await send(p.publicKey, { conversationId: id, messages: [user('hi')] });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'Identity verification required' });
    expect(await rows(id)).toEqual([]);
    const wrong = await send(p.publicKey, { conversationId: id, messages: [user('hi')] }, { 'x-user-hmac': signUserId(p.hmacSecret, 'mallory') });
    expect(wrong.statusCode).toBe(401);
    const ok = await send(p.publicKey, { conversationId: id, messages: [user('hi')] }, { 'x-user-hmac': hmac });
    expect(ok.statusCode).toBe(200);
    expect((await rows(id)).length).toBe(2);
  });
});
