import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { chunkTypes, parseAnswer, streamedText } from '../../../test/ui-stream.js';
import { HANDOFF_REPLY, HANDOFF_TOOL } from '../../agent/handoff-tool.js';
import { createUser } from '../../accounts/users.js';
import { base62 } from '../../lib/ids.js';
import type { ProjectSettings } from '../../projects/project.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { HandoffDoc } from './schema.js';

/**
 * Handoff to a person through the whole app, from each way in (the widget's button, the model's
 * tool, the builtin model, the policy, a teammate), and what it changes: no model call while a
 * person has the conversation, a person's replies stored as theirs, and the agent answering again,
 * with those replies in its history, once the conversation is handed back.
 */
describe.each(dialects)('handoff on $name', (dialect) => {
  let fake: FakeOpenAICompatible;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({
      dialect,
      // Webhook endpoints on this machine (they are never called here: no delivery worker runs).
      env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake', ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  async function setup(settings: ProjectSettings = { model: 'openai-compatible:fake' }, userId?: string) {
    const p = await createProject(t, settings);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(p.publicKey),
      payload: userId ? { endUserExternalId: userId } : {},
    });
    expect(res.statusCode).toBe(201);
    return { p, id: res.json().conversationId as string };
  }

  /** Sends over the real port and parses the stream with the AI SDK's own reader. */
  async function send(p: CreatedProject, conversationId: string, text: string) {
    const res = await fetch(`${base}/api/v1/chat/messages`, {
      method: 'POST',
      headers: { ...auth(p.publicKey), 'content-type': 'application/json' },
      body: JSON.stringify({ conversationId, messages: [{ role: 'user', content: text }] }),
    });
    expect(res.status).toBe(200);
    return parseAnswer(await res.text());
  }

  const requestHandoff = (p: CreatedProject, id: string, payload?: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey), ...(payload !== undefined ? { payload } : {}) });
  const conversation = async (p: CreatedProject, id: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(p.publicKey) });
    expect(res.statusCode).toBe(200);
    return res.json() as { handoff: HandoffDoc; messages: Array<{ id: string; role: string; content: string; author?: unknown }> };
  };
  const adminRead = async (p: CreatedProject, id: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}`, headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const rows = (id: string) => t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', id).orderBy('seq').execute();
  const admin = (p: CreatedProject, id: string, action: string, payload?: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}/${action}`,
      headers: adminAuth(),
      ...(payload !== undefined ? { payload } : {}),
    });

  it('the widget button asks for a person: requested, shown in the conversation, the list and admin reads; asking again changes nothing', async () => {
    const { p, id } = await setup({ model: 'openai-compatible:fake' }, 'user-1');
    fake.enqueue({ text: 'Hello.' });
    await send(p, id, 'hi');

    const res = await requestHandoff(p, id, { reason: 'My parcel is lost' });
    expect(res.statusCode).toBe(200);
    const handoff = res.json().handoff;
    expect(handoff).toMatchObject({ status: 'requested', reason: 'My parcel is lost', via: 'user' });
    expect(Date.parse(handoff.requestedAt)).not.toBeNaN();

    expect((await conversation(p, id)).handoff).toEqual(handoff);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=user-1', headers: auth(p.publicKey) });
    expect(list.json().conversations[0].handoff).toEqual(handoff);
    expect((await adminRead(p, id)).conversation.handoff).toEqual(handoff);
    const inbox = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations?handoff=requested`, headers: adminAuth() });
    expect(inbox.json().conversations.map((c: { id: string }) => c.id)).toEqual([id]);

    const again = await requestHandoff(p, id, { reason: 'Another reason' });
    expect(again.json().handoff).toEqual(handoff);
    // No body at all is fine too.
    expect((await requestHandoff(p, id)).statusCode).toBe(200);
  });

  it('refuses what it must: unknown or another project’s conversation 404, closed 400, handoff off 409, long reason 400', async () => {
    const { p, id } = await setup();
    const other = await setup();
    expect((await requestHandoff(other.p, id)).statusCode).toBe(404);
    expect((await requestHandoff(p, 'conv_nope')).json()).toEqual({ error: 'Conversation not found' });
    const long = await requestHandoff(p, id, { reason: 'x'.repeat(501) });
    expect(long.statusCode).toBe(400);
    expect(long.json().error).toBe('Validation error');

    expect((await admin(p, id, 'close')).statusCode).toBe(200);
    expect((await requestHandoff(p, id)).json()).toEqual({ error: 'Conversation expired' });

    const off = await setup({ model: 'openai-compatible:fake', handoff: { enabled: false } });
    const refused = await requestHandoff(off.p, off.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ error: 'Handoff is turned off for this project' });
    const config = await t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(off.p.publicKey) });
    expect(config.json().handoff).toEqual({ enabled: false, officeHoursText: null });
  });

  it('a handoff ends with its conversation: closed or idle past the TTL, it leaves the inbox and reads show none', async () => {
    const inbox = async (p: CreatedProject, handoff: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations?handoff=${handoff}`, headers: adminAuth() });
      expect(res.statusCode).toBe(200);
      return (res.json().conversations as Array<{ id: string }>).map((c) => c.id);
    };
    // Asked for from the widget's home screen: no message yet, and still waiting in the inbox.
    const waiting = await setup();
    expect((await requestHandoff(waiting.p, waiting.id)).statusCode).toBe(200);
    expect(await inbox(waiting.p, 'requested')).toEqual([waiting.id]);

    // Closed by a teammate: the handoff is over, in the row, every read, the inbox and the webhook.
    const hook = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${waiting.p.project.id}/webhooks`,
      headers: adminAuth(),
      payload: { url: 'http://127.0.0.1:9/hooks', events: ['conversation.closed'] },
    });
    expect(hook.statusCode).toBe(201);
    expect((await admin(waiting.p, waiting.id, 'assign', { assignee: { name: 'Dana' } })).statusCode).toBe(200);
    expect(await inbox(waiting.p, 'active')).toEqual([waiting.id]);
    const closed = await admin(waiting.p, waiting.id, 'close');
    expect(closed.statusCode).toBe(200);
    expect(closed.json().conversation).toMatchObject({ status: 'CLOSED', handoff: null });
    expect((await conversation(waiting.p, waiting.id)).handoff).toBeNull();
    expect(await inbox(waiting.p, 'any')).toEqual([]);
    const row = await t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', waiting.id).executeTakeFirstOrThrow();
    expect([row.handoff_status, row.handoff_assignee_name, row.handoff_requested_at]).toEqual([null, null, null]);
    const [event] = await t.deps.store.db.selectFrom('webhook_events').select('payload').where('project_id', '=', waiting.p.project.id).where('type', '=', 'conversation.closed').execute();
    expect(JSON.parse(event!.payload).data.previousHandoff).toMatchObject({ status: 'active', assignee: { id: null, name: 'Dana' }, via: 'user' });
    // Nothing can be done with it any more, and nothing half-done is left.
    expect((await admin(waiting.p, waiting.id, 'assign', { assignee: { name: 'Dana' } })).json()).toEqual({ error: 'Conversation is closed' });
    expect((await admin(waiting.p, waiting.id, 'messages', { content: 'Still there?' })).json()).toEqual({ error: 'Conversation is closed' });
    expect((await admin(waiting.p, waiting.id, 'handback')).statusCode).toBe(200);

    // Idle past the TTL: closed by the status rule, so its handoff is over too, without a write.
    const idle = await setup({ model: 'openai-compatible:fake', conversationTtlMinutes: 5 });
    expect((await requestHandoff(idle.p, idle.id)).statusCode).toBe(200);
    expect(await inbox(idle.p, 'requested')).toEqual([idle.id]);
    const old = new Date(Date.now() - 6 * 60_000).toISOString();
    await t.deps.store.db.updateTable('conversations').set({ updated_at: old }).where('id', '=', idle.id).execute();
    expect(await inbox(idle.p, 'requested')).toEqual([]);
    expect((await conversation(idle.p, idle.id)).handoff).toBeNull();
    expect((await adminRead(idle.p, idle.id)).conversation).toMatchObject({ status: 'CLOSED', handoff: null });
  });

  it('while handed off, a send stores the message, calls no model, and streams start, data-handoff, finish', async () => {
    const { p, id } = await setup();
    await requestHandoff(p, id, { reason: 'Talk to a person' });
    const before = fake.requests.length;

    const answer = await send(p, id, 'Are you there?');
    expect(fake.requests.length).toBe(before);
    expect(chunkTypes(answer.chunks)).toEqual(['start', 'data-handoff', 'finish']);
    // No answer is stored, so `start` names no message (an id there would be one to rate, and 404).
    expect(answer.chunks[0]).toEqual({ type: 'start', messageMetadata: { conversationId: id } });
    const data = answer.chunks.find((c) => c.type === 'data-handoff') as { data: HandoffDoc };
    expect(data.data).toMatchObject({ status: 'requested', reason: 'Talk to a person' });
    expect(answer.raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(answer.message?.parts).toEqual([{ type: 'data-handoff', data: data.data }]);

    const stored = await rows(id);
    expect(stored.map((r) => [r.role, r.content])).toEqual([['user', 'Are you there?']]);
    // The conversation is free again at once: a second message goes through too.
    await send(p, id, 'Hello?');
    expect(fake.requests.length).toBe(before);
    expect((await rows(id)).length).toBe(2);
  });

  it('while handed off, a repeated message and messages sent at the same moment are each stored, none refused as busy', async () => {
    const { p, id } = await setup();
    await requestHandoff(p, id);
    // Nobody answers yet, so the visitor asks again in the same words: a new message, not a retry.
    await send(p, id, 'Hello?');
    await send(p, id, 'Hello?');
    expect((await rows(id)).map((r) => r.content)).toEqual(['Hello?', 'Hello?']);

    // Two tabs of the same visitor, five messages at once: each waits for the one before.
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const statuses = await Promise.all(
      texts.map((text) =>
        fetch(`${base}/api/v1/chat/messages`, {
          method: 'POST',
          headers: { ...auth(p.publicKey), 'content-type': 'application/json' },
          body: JSON.stringify({ conversationId: id, messages: [{ role: 'user', content: text }] }),
        }).then(async (r) => [r.status, await r.text()] as const),
      ),
    );
    expect(statuses.map(([status]) => status)).toEqual([200, 200, 200, 200, 200]);
    const stored = await rows(id);
    expect(stored.map((r) => r.content).slice(2).sort()).toEqual([...texts].sort());
    expect(stored.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('a person replies (201, assistant written by them), hands back, and the agent answers next with the reply in its history', async () => {
    const { p, id } = await setup();
    fake.enqueue({ text: 'I can help with orders.' });
    await send(p, id, 'Where is my order 1234?');
    await requestHandoff(p, id);

    const taken = await admin(p, id, 'assign', { assignee: { id: 'user_dana', name: 'Dana' } });
    expect(taken.statusCode).toBe(200);
    expect(taken.json().conversation.handoff).toMatchObject({ status: 'active', assignee: { id: 'user_dana', name: 'Dana' }, via: 'user' });

    const reply = await admin(p, id, 'messages', { content: 'Hi, Dana here: order 1234 left our warehouse today.' });
    expect(reply.statusCode).toBe(201);
    expect(reply.json().message).toMatchObject({
      role: 'assistant',
      content: 'Hi, Dana here: order 1234 left our warehouse today.',
      author: { type: 'human', id: 'user_dana', name: 'Dana' },
    });
    const stored = (await rows(id)).at(-1)!;
    expect(stored).toMatchObject({ role: 'assistant', author_type: 'human', author_id: 'user_dana', author_name: 'Dana', status: 'complete' });
    const history = await conversation(p, id);
    expect(history.messages[1]!.author).toEqual({ type: 'agent' });
    expect(history.messages.at(-1)!.author).toEqual({ type: 'human', id: 'user_dana', name: 'Dana' });

    const back = await admin(p, id, 'handback');
    expect(back.statusCode).toBe(200);
    expect(back.json().conversation.handoff).toBeNull();

    fake.enqueue({ text: 'Glad Dana could help. Anything else?' });
    const before = fake.requests.length;
    const answer = await send(p, id, 'Thanks! When will it arrive?');
    expect(fake.requests.length).toBe(before + 1);
    expect(streamedText(answer.chunks)).toBe('Glad Dana could help. Anything else?');
    const sent = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const turns = sent.filter((m) => m.role !== 'system').map((m) => [m.role, typeof m.content === 'string' ? m.content : JSON.stringify(m.content)]);
    expect(turns).toEqual([
      ['user', 'Where is my order 1234?'],
      ['assistant', 'I can help with orders.'],
      ['assistant', 'Hi, Dana here: order 1234 left our warehouse today.'],
      ['user', 'Thanks! When will it arrive?'],
    ]);
  });

  it('a reply from a person who had not taken the conversation takes it over, so the agent does not answer over them', async () => {
    const { p, id } = await setup();
    const reply = await admin(p, id, 'messages', { content: 'Hello from the team.', author: { name: 'Sam' } });
    expect(reply.statusCode).toBe(201);
    expect(reply.json().conversation.handoff).toMatchObject({ status: 'active', assignee: { id: null, name: 'Sam' }, via: 'teammate' });
    const before = fake.requests.length;
    const answer = await send(p, id, 'Hi Sam');
    expect(fake.requests.length).toBe(before);
    expect(chunkTypes(answer.chunks)).toEqual(['start', 'data-handoff', 'finish']);

    const bad = await admin(p, id, 'messages', { content: '   ' });
    expect(bad.statusCode).toBe(400);
    expect((await admin(p, 'conv_nope', 'messages', { content: 'x' })).statusCode).toBe(404);
    await admin(p, id, 'close');
    expect((await admin(p, id, 'messages', { content: 'late' })).json()).toEqual({ error: 'Conversation is closed' });
  });

  it('a real model hands off through the request_handoff tool, and only when the project allows it', async () => {
    const { p, id } = await setup();
    fake.enqueue(
      { toolCalls: [{ name: HANDOFF_TOOL, arguments: { reason: 'Wants a refund exception' } }] },
      { text: 'A person from our team will reply here.' },
    );
    const answer = await send(p, id, 'I need an exception to the refund policy, get me a manager');
    const offered = (fake.requests.at(-2)!.body.tools as Array<{ function: { name: string } }>).map((x) => x.function.name);
    expect(offered).toContain(HANDOFF_TOOL);
    expect(chunkTypes(answer.chunks)).toContain('tool-output-available');
    expect((await conversation(p, id)).handoff).toMatchObject({ status: 'requested', reason: 'Wants a refund exception', via: 'agent' });

    const off = await setup({ model: 'openai-compatible:fake', handoff: { enabled: false } });
    fake.enqueue({ text: 'Sure.' });
    await send(off.p, off.id, 'hello');
    const tools = (fake.requests.at(-1)!.body.tools ?? []) as Array<{ function: { name: string } }>;
    expect(tools.map((x) => x.function.name)).not.toContain(HANDOFF_TOOL);
  });

  it("stores a real model's handoff reason as storable text: without U+0000, U+FFFD for half a surrogate pair", async () => {
    const { p, id } = await setup();
    fake.enqueue({ toolCalls: [{ name: HANDOFF_TOOL, arguments: { reason: 'Wants\u0000 a refund \ud800exception' } }] }, { text: 'A person will reply here.' });
    await send(p, id, 'get me a manager');
    const reason = 'Wants a refund \ufffdexception';
    expect((await conversation(p, id)).handoff).toMatchObject({ status: 'requested', reason, via: 'agent' });
    const row = await t.deps.store.db.selectFrom('conversations').select('handoff_reason').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.handoff_reason).toBe(reason);
  });

  it('the builtin model recognises a request for a person, and not a question about itself', async () => {
    const { p, id } = await setup({});
    const asked = await send(p, id, 'Can I talk to a human please?');
    expect(streamedText(asked.chunks)).toBe(HANDOFF_REPLY);
    expect((await conversation(p, id)).handoff).toMatchObject({ status: 'requested', via: 'agent', reason: 'Can I talk to a human please?' });

    const other = await setup({});
    const about = await send(other.p, other.id, 'Are you a human?');
    expect(streamedText(about.chunks)).not.toBe(HANDOFF_REPLY);
    expect((await conversation(other.p, other.id)).handoff).toBeNull();
  });

  it('the builtin model hands off on the usual ways of asking for a person, with the question as the reason', async () => {
    for (const text of [
      "what's the quickest way to get a human on the line",
      'connect me to an agent',
      'I want to speak with someone from support',
      'real person please',
      'representative',
      'I need an exception to the refund policy, get me a manager',
      'I want a person, not a bot',
      "I don't want a bot, I want a human",
      'Can I have a real person?',
      'I need someone to help me with my order',
      'Can someone please help me with a refund?',
      'I would like somebody to call me back about my invoice',
      'Is there someone who can look at my account?',
    ]) {
      const { p, id } = await setup({});
      const answer = await send(p, id, text);
      expect(streamedText(answer.chunks), text).toBe(HANDOFF_REPLY);
      expect(answer.chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: HANDOFF_TOOL, input: { reason: text } });
      expect((await conversation(p, id)).handoff, text).toMatchObject({ status: 'requested', via: 'agent', reason: text });
      // Handing over is no action's answer: analytics count actions apart.
      expect((await rows(id)).map((r) => r.outcome), text).toEqual([null, 'answered']);
    }
  });

  it('the builtin model answers a question that mentions a person, a user or a request, and never asks for a handoff reason', async () => {
    for (const text of [
      'How do I set a timeout on an outgoing HTTP request?',
      'My terminal tool needs to ask the person at the keyboard for their name and wait until they type it',
      'Where should my app keep its settings for the logged-in person? How do I find their personal folder?',
      'How do I pass an agent to http.request?',
      'Is there an operator for concatenating arrays?',
      'How do I get a human readable file size?',
      'Which user requested this export?',
      'Do you have customer service on Sundays?',
      "I don't need a person, just tell me the price.",
      'No need to get a human involved, what does shipping cost?',
      'I need the logged-in person to confirm before the file is deleted',
      'Can someone with read access see the audit log?',
      'How do I let somebody help me edit a shared document?',
    ]) {
      const { p, id } = await setup({});
      const answer = await send(p, id, text);
      const said = streamedText(answer.chunks);
      expect(said, text).not.toBe(HANDOFF_REPLY);
      expect(said, text).not.toMatch(/hand this conversation|I need your/i);
      expect(answer.chunks.some((c) => c.type === 'tool-input-available' && c.toolName === HANDOFF_TOOL), text).toBe(false);
      expect((await conversation(p, id)).handoff, text).toBeNull();
      // Nothing to answer from in this project: the agent says so, stored as a declined answer.
      const stored = await rows(id);
      expect(stored.map((r) => [r.role, r.outcome]), text).toEqual([['user', null], ['assistant', 'declined']]);
      expect(stored[1]!.content).toBe(said);
    }
  });

  it('the builtin model offers a person in plain words, not by the handoff tool’s name', async () => {
    const { p, id } = await setup({});
    const said = streamedText((await send(p, id, 'What can you do?')).chunks);
    expect(said).not.toMatch(/handoff/i);
    expect(said).toContain('put you in touch with a person');
    expect((await conversation(p, id)).handoff).toBeNull();
  });

  it('policy: a NEGATIVE rating hands off when onNegativeFeedback is on, not otherwise', async () => {
    const { p, id } = await setup({ model: 'openai-compatible:fake', handoff: { onNegativeFeedback: true } });
    fake.enqueue({ text: 'Try turning it off and on.' });
    const answer = await send(p, id, 'My device is broken');
    const messageId = (answer.chunks[0] as { messageId: string }).messageId;
    const rate = (project: CreatedProject, conversationId: string, rating: string, mid?: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(project.publicKey), payload: { conversationId, rating, ...(mid ? { messageId: mid } : {}) } });
    expect((await rate(p, id, 'POSITIVE', messageId)).statusCode).toBe(201);
    expect((await conversation(p, id)).handoff).toBeNull();
    expect((await rate(p, id, 'NEGATIVE', messageId)).statusCode).toBe(201);
    expect((await conversation(p, id)).handoff).toMatchObject({ status: 'requested', via: 'policy' });

    const plain = await setup();
    expect((await rate(plain.p, plain.id, 'NEGATIVE')).statusCode).toBe(201);
    expect((await conversation(plain.p, plain.id)).handoff).toBeNull();
  });

  it('policy: after N declined answers in a row; a hand-back starts the count again (no handoff loop)', async () => {
    const { p, id } = await setup({ handoff: { afterDeclined: 2 } });
    // The builtin model with no knowledge: it searches, finds nothing, and says so.
    await send(p, id, 'What is the warranty on the blue kettle?');
    expect((await conversation(p, id)).handoff).toBeNull();
    await send(p, id, 'hello');
    await send(p, id, 'Do you ship to Iceland?');
    // Small talk in between broke the streak.
    expect((await conversation(p, id)).handoff).toBeNull();
    await send(p, id, 'Can I pay with crypto?');
    expect((await conversation(p, id)).handoff).toMatchObject({ status: 'requested', via: 'policy' });

    await admin(p, id, 'handback');
    await send(p, id, 'And gift wrapping?');
    expect((await conversation(p, id)).handoff).toBeNull();
  });

  it('a dashboard user takes over as themselves ("assign to me") and replies under their own name; a viewer may not', async () => {
    const { p, id } = await setup();
    const SAME_ORIGIN = { host: 'dash.example', 'sec-fetch-site': 'same-origin', origin: 'http://dash.example' };
    const signIn = async (role: 'agent' | 'viewer') => {
      const email = `${role}-${base62(8).toLowerCase()}@example.com`;
      const u = await createUser(t.deps.store.db, { email, name: `Alex ${role}`, role: 'member', password: 'correct horse battery', memberships: [{ projectId: p.project.id, role }] });
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: SAME_ORIGIN, payload: { email, password: 'correct horse battery' } });
      const cookie = /answerdesk_session=([^;]*)/.exec(String(res.headers['set-cookie']))![1];
      return { user: u, headers: { ...SAME_ORIGIN, cookie: `answerdesk_session=${cookie}` } };
    };
    const agent = await signIn('agent');
    const post = (headers: Record<string, string>, action: string, payload?: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}/${action}`, headers, ...(payload ? { payload } : {}) });

    const mine = await post(agent.headers, 'assign');
    expect(mine.statusCode).toBe(200);
    expect(mine.json().conversation.handoff.assignee).toEqual({ id: agent.user.id, name: 'Alex agent' });
    const reply = await post(agent.headers, 'messages', { content: 'Hello, Alex here.' });
    expect(reply.statusCode).toBe(201);
    expect(reply.json().message.author).toEqual({ type: 'human', id: agent.user.id, name: 'Alex agent' });
    const posing = await post(agent.headers, 'messages', { content: 'Hi', author: { name: 'Someone else' } });
    expect(posing.statusCode).toBe(400);
    // Nor may they hand the conversation to a person of their own making, under another user's id.
    const owner = await createUser(t.deps.store.db, { email: `owner-${base62(8).toLowerCase()}@example.com`, name: 'Olga', role: 'owner', password: 'correct horse battery' });
    const posingAssign = await post(agent.headers, 'assign', { assignee: { id: owner.id, name: 'Someone else' } });
    expect(posingAssign.statusCode).toBe(400);
    expect(posingAssign.json().error).toBe('A signed-in user takes a conversation as themselves: leave out `assignee`');
    expect((await adminRead(p, id)).conversation.handoff.assignee).toEqual({ id: agent.user.id, name: 'Alex agent' });
    const stored = await t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain('Someone else');

    const viewer = await signIn('viewer');
    expect((await post(viewer.headers, 'handback')).statusCode).toBe(403);
    expect((await post(agent.headers, 'handback')).json().conversation.handoff).toBeNull();
    // Without a session the person must be named.
    const nameless = await admin(p, id, 'assign', {});
    expect(nameless.statusCode).toBe(400);
    expect(nameless.json().error).toBe('Validation error');
  });

  it('writes conversation.handoff_requested (transcript, summary), handoff_accepted and handed_back to the webhook outbox', async () => {
    const { p, id } = await setup();
    const hook = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/webhooks`,
      headers: adminAuth(),
      payload: {
        url: 'http://127.0.0.1:9/hooks',
        events: ['conversation.handoff_requested', 'conversation.handoff_accepted', 'conversation.handed_back', 'message.created'],
      },
    });
    expect(hook.statusCode).toBe(201);
    fake.enqueue({ text: 'Let me look.' });
    await send(p, id, 'My parcel 1234 never arrived');
    await requestHandoff(p, id, { reason: 'Wants a refund for a lost parcel' });
    await requestHandoff(p, id, { reason: 'Again' });
    await admin(p, id, 'assign', { assignee: { id: 'user_dana', name: 'Dana' } });
    await admin(p, id, 'messages', { content: 'Refund issued.' });
    await admin(p, id, 'handback');
    await admin(p, id, 'handback');

    const events = await t.deps.store.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('project_id', '=', p.project.id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const bodies = events.map((e) => JSON.parse(e.payload) as { type: string; data: Record<string, any> });
    const handoffEvents = bodies.filter((b) => b.type.startsWith('conversation.'));
    // Repeats that changed nothing sent nothing.
    expect(handoffEvents.map((b) => b.type)).toEqual(['conversation.handoff_requested', 'conversation.handoff_accepted', 'conversation.handed_back']);
    const requested = handoffEvents[0]!.data;
    expect(requested.conversation).toEqual({ id, projectId: p.project.id });
    expect(requested.handoff).toMatchObject({ status: 'requested', reason: 'Wants a refund for a lost parcel', via: 'user' });
    expect(requested.summary).toBe('Wants a refund for a lost parcel. Last message from the user: "My parcel 1234 never arrived"');
    expect(requested.transcript.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'My parcel 1234 never arrived'],
      ['assistant', 'Let me look.'],
    ]);
    expect(handoffEvents[1]!.data.handoff).toMatchObject({ status: 'active', assignee: { id: 'user_dana', name: 'Dana' } });
    expect(handoffEvents[2]!.data.previous).toMatchObject({ status: 'active', assignee: { name: 'Dana' } });
    const human = bodies.find((b) => b.type === 'message.created' && b.data.message.content === 'Refund issued.');
    expect(human!.data.message.author).toEqual({ type: 'human', id: 'user_dana', name: 'Dana' });
  });
});
