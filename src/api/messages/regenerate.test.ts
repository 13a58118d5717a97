import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClient } from '../../../test/chat-client.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { parseAnswer, streamedText } from '../../../test/ui-stream.js';
import { waitFor } from '../../../test/wait.js';
import { appendMessage } from '../../conversations/messages.js';
import type { CreatedProject } from '../../projects/projects.js';

const textOf = (m: { parts: Array<{ type: string; text?: string }> }) =>
  m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

/**
 * An AI SDK chat client's `regenerate()`: the AI SDK's own `DefaultChatTransport` and chat state over
 * a real port, answers from a real provider talking to a fake model server.
 */
describe.each(dialects)('regenerate-message from an AI SDK client on $name', (dialect) => {
  let fake: FakeOpenAICompatible;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({ dialect, env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  /** Each test has its own project and conversation, and a chat client bound to them. */
  async function setup(): Promise<{ p: CreatedProject; id: string; client: ReturnType<typeof chatClient> }> {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const id: string = res.json().conversationId;
    return { p, id, client: chatClient({ baseUrl: base, key: p.publicKey, conversationId: id }) };
  }

  const rows = (conversationId: string) =>
    t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
  const conversationRow = (conversationId: string) =>
    t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', conversationId).executeTakeFirstOrThrow();
  const history = async (p: CreatedProject, conversationId: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(p.publicKey) });
    expect(res.statusCode).toBe(200);
    return res.json().messages as Array<{ id: string; role: string; content: string; status?: string }>;
  };

  it('replaces the last answer: one copy of each turn, the old answer kept as a superseded version the model never sees', async () => {
    const { p, id, client } = await setup();
    const { chat, requests } = client;
    fake.enqueue({ text: 'First answer.' }, { text: 'Second answer.' }, { text: 'Third answer.' });

    await chat.sendMessage({ text: 'Where is my parcel?' });
    expect(chat.error).toBeUndefined();
    const first = chat.messages[1]!;
    await chat.regenerate();
    expect(chat.error).toBeUndefined();
    const second = chat.messages[1]!;
    await chat.regenerate({ messageId: second.id });
    expect(chat.error).toBeUndefined();
    const third = chat.messages[1]!;

    // The AI SDK's request shape: {...body, id, messages, trigger, messageId}.
    expect(requests.map((r) => [r.trigger, r.messageId, r.id, r.conversationId])).toEqual([
      ['submit-message', undefined, id, id],
      ['regenerate-message', undefined, id, id],
      ['regenerate-message', second.id, id, id],
    ]);
    expect((requests[1].messages as unknown[]).length).toBe(1);

    // The client shows one question and the newest answer; the server says the same.
    expect(chat.messages.map((m) => [m.role, textOf(m)])).toEqual([
      ['user', 'Where is my parcel?'],
      ['assistant', 'Third answer.'],
    ]);
    expect((await history(p, id)).map((m) => [m.role, m.content, m.id])).toEqual([
      ['user', 'Where is my parcel?', expect.stringMatching(/^msg_/)],
      ['assistant', 'Third answer.', third.id],
    ]);

    // Stored: the question once, every answer, the replaced ones pointing at their successor.
    const stored = await rows(id);
    expect(stored.map((r) => [r.role, r.content, r.superseded_by])).toEqual([
      ['user', 'Where is my parcel?', null],
      ['assistant', 'First answer.', second.id],
      ['assistant', 'Second answer.', third.id],
      ['assistant', 'Third answer.', null],
    ]);
    expect(stored.map((r) => r.id).slice(1)).toEqual([first.id, second.id, third.id]);
    expect(await conversationRow(id)).toMatchObject({ message_count: 2, last_message_role: 'ASSISTANT', last_message_preview: 'Third answer.' });

    // Each regeneration is asked the question alone, never shown the answer it replaces.
    for (const request of fake.requests.slice(-2)) {
      expect(request.body.messages.filter((m: { role: string }) => m.role !== 'system')).toEqual([{ role: 'user', content: 'Where is my parcel?' }]);
    }

    // The next question follows the current answer, and the model sees only that.
    fake.enqueue({ text: 'Tomorrow.' });
    await chat.sendMessage({ text: 'When will it arrive?' });
    expect(fake.requests[fake.requests.length - 1].body.messages.filter((m: { role: string }) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'Where is my parcel?' },
      { role: 'assistant', content: 'Third answer.' },
      { role: 'user', content: 'When will it arrive?' },
    ]);
    expect((await history(p, id)).map((m) => m.content)).toEqual(['Where is my parcel?', 'Third answer.', 'When will it arrive?', 'Tomorrow.']);
    expect(await conversationRow(id)).toMatchObject({ message_count: 4, last_message_preview: 'Tomorrow.' });
  });

  it('refuses to regenerate anything but the last answer with 400, storing nothing', async () => {
    const { p, id, client } = await setup();
    const { chat } = client;
    fake.enqueue({ text: 'Answer one.' }, { text: 'Answer two.' });
    await chat.sendMessage({ text: 'Question one?' });
    const olderAnswer = chat.messages[1]!;
    await chat.sendMessage({ text: 'Question two?' });
    const before = await rows(id);
    const requestsBefore = fake.requests.length;

    // The AI SDK client sends what it has: the conversation up to the older answer.
    await chat.regenerate({ messageId: olderAnswer.id });
    expect(chat.status).toBe('error');
    expect(JSON.parse(chat.error!.message)).toEqual({ error: "Only the conversation's last answer can be regenerated" });

    const send = (payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/api/v1/chat/messages', headers: auth(p.publicKey), payload: { conversationId: id, ...payload } });
    const question = (text: string) => [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }];
    // An id that is no message of this conversation; the question of an older turn.
    const unknown = await send({ id, trigger: 'regenerate-message', messageId: 'msg_nope', messages: question('Question two?') });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({ error: "Only the conversation's last answer can be regenerated" });
    const older = await send({ id, trigger: 'regenerate-message', messageId: before[0].id, messages: question('Question one?') });
    expect(older.statusCode).toBe(400);
    // Without a messageId, the words must still be the last question's (a client that missed a turn).
    const stale = await send({ id, trigger: 'regenerate-message', messages: question('Question one?') });
    expect(stale.statusCode).toBe(400);
    expect(stale.json()).toEqual({ error: "The last message is not the conversation's last question" });
    const badTrigger = await send({ trigger: 'rewrite-history', messages: question('Question two?') });
    expect(badTrigger.statusCode).toBe(400);
    expect(badTrigger.json()).toMatchObject({ error: 'Validation error', details: [expect.objectContaining({ path: 'trigger' })] });

    expect(await rows(id)).toEqual(before);
    expect(fake.requests.length).toBe(requestsBefore);
    // Nothing was left holding the conversation: a regenerate of the last answer goes through.
    fake.enqueue({ text: 'Answer two, again.' });
    const ok = await send({ id, trigger: 'regenerate-message', messageId: before[3].id, messages: question('Question two?') });
    expect(ok.statusCode).toBe(200);
    expect(streamedText((await parseAnswer(ok.body)).chunks)).toBe('Answer two, again.');
    expect((await history(p, id)).map((m) => m.content)).toEqual(['Question one?', 'Answer one.', 'Question two?', 'Answer two, again.']);
  });

  it('a refused regenerate has let go of the conversation by the time it is answered', async () => {
    const { p, id, client } = await setup();
    fake.enqueue({ text: 'Answer one.' }, { text: 'Answer two.' });
    await client.chat.sendMessage({ text: 'Question one?' });
    await client.chat.sendMessage({ text: 'Question two?' });
    const question = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Question one?' }] }];
    for (let round = 0; round < 5; round++) {
      const refused = await t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/messages',
        headers: auth(p.publicKey),
        payload: { conversationId: id, id, trigger: 'regenerate-message', messages: question },
      });
      expect(refused.statusCode).toBe(400);
      // A client that sends its next message at once must not find the conversation busy.
      const leases = await t.deps.store.db.selectFrom('answer_leases').select('conversation_id').where('conversation_id', '=', id).execute();
      expect(leases).toEqual([]);
    }
  });

  it('regenerates a failed answer in place, and a question left without an answer gets one', async () => {
    const { p, id, client } = await setup();
    const { chat } = client;
    fake.enqueue({ httpError: { status: 400 } }, { text: 'Here it is.' });
    await chat.sendMessage({ text: 'Track order 42' });
    // The client stops reading at the error chunk; the server stores the failed answer right after.
    await waitFor(async () => (await t.deps.store.db.selectFrom('answer_leases').select('token').where('conversation_id', '=', id).execute()).length === 0);
    expect((await rows(id)).map((r) => [r.role, r.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'error'],
    ]);
    await chat.regenerate();
    expect((await history(p, id)).map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', 'Track order 42', undefined],
      ['assistant', 'Here it is.', 'complete'],
    ]);

    // A question whose answer was never stored (the node died): regenerate answers it, once.
    const conv = await setup();
    const q = await appendMessage(t.deps.store.db, { id: conv.id, project_id: conv.p.project.id }, { role: 'user', content: 'Anyone there?', status: 'complete' });
    fake.enqueue({ text: 'Yes.' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(conv.p.publicKey),
      payload: { conversationId: conv.id, id: conv.id, trigger: 'regenerate-message', messages: [{ id: q.id, role: 'user', parts: [{ type: 'text', text: 'Anyone there?' }] }] },
    });
    expect(res.statusCode).toBe(200);
    expect((await history(conv.p, conv.id)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Anyone there?'],
      ['assistant', 'Yes.'],
    ]);
    expect(await conversationRow(conv.id)).toMatchObject({ message_count: 2, last_message_preview: 'Yes.' });
  });

  it('keeps feedback with the version it rated; the admin sees every version', async () => {
    const { p, id, client } = await setup();
    const { chat } = client;
    fake.enqueue({ text: 'Not helpful.' }, { text: 'Better.' });
    await chat.sendMessage({ text: 'How do I return shoes?' });
    const old = chat.messages[1]!;
    const rate = (messageId: string, rating: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(p.publicKey), payload: { conversationId: id, messageId, rating } });
    expect((await rate(old.id, 'NEGATIVE')).statusCode).toBe(201);
    await chat.regenerate();
    const current = chat.messages[1]!;
    expect((await rate(current.id, 'POSITIVE')).statusCode).toBe(201);
    // A client that still shows the old version may rate it: the rating stays with the text it rated.
    const late = await rate(old.id, 'NEGATIVE');
    expect(late.statusCode).toBe(201);
    expect(late.json().feedback).toMatchObject({ messageId: old.id, rating: 'NEGATIVE' });

    const admin = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}`, headers: adminAuth() });
    expect(admin.statusCode).toBe(200);
    const body = admin.json();
    expect(body.messages.map((m: { content: string; supersededBy: string | null }) => [m.content, m.supersededBy])).toEqual([
      ['How do I return shoes?', null],
      ['Not helpful.', current.id],
      ['Better.', null],
    ]);
    expect(body.feedback.map((f: { messageId: string; rating: string }) => [f.messageId, f.rating])).toEqual([
      [old.id, 'NEGATIVE'],
      [current.id, 'POSITIVE'],
    ]);
    expect(body.conversation).toMatchObject({ messageCount: 2, lastMessagePreview: 'Better.' });
    expect((await history(p, id)).map((m) => m.content)).toEqual(['How do I return shoes?', 'Better.']);
  });
});
