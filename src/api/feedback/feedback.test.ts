import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { appendMessage } from '../../conversations/messages.js';
import { signUserId } from '../../lib/keys.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { Feedback } from './schema.js';

describe.each(dialects)('feedback on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t);
    b = await createProject(t, {}, 'Beta');
  });
  afterAll(() => t.close());

  /** A conversation of `p` with one user and one assistant message. */
  async function conversationWithMessages(p: CreatedProject, endUserExternalId?: string, headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(p.publicKey, headers),
      payload: endUserExternalId ? { endUserExternalId } : undefined,
    });
    expect(res.statusCode).toBe(201);
    const id: string = res.json().conversationId;
    const conv = { id, project_id: p.project.id };
    const user = await appendMessage(t.deps.store.db, conv, { role: 'user', content: 'How do refunds work?', status: 'complete' });
    const assistant = await appendMessage(t.deps.store.db, conv, { role: 'assistant', content: 'Within 30 days.', status: 'complete' });
    return { id, userMessageId: user.id, assistantMessageId: assistant.id };
  }

  const post = (key: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(key, headers), payload: payload as object });

  const rows = (conversationId: string) =>
    t.deps.store.db.selectFrom('feedback').selectAll().where('conversation_id', '=', conversationId).orderBy('target').execute();

  it('rates a message with a comment: 201 {feedback} and one stored row', async () => {
    const c = await conversationWithMessages(a);
    const res = await post(a.publicKey, { conversationId: c.id, messageId: c.assistantMessageId, rating: 'POSITIVE', comment: 'Clear answer' });
    expect(res.statusCode).toBe(201);
    const { feedback } = res.json() as { feedback: Feedback };
    expect(feedback).toEqual({
      id: expect.stringMatching(/^fb_[0-9A-Za-z]{22}$/),
      conversationId: c.id,
      messageId: c.assistantMessageId,
      rating: 'POSITIVE',
      comment: 'Clear answer',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(await rows(c.id)).toEqual([
      expect.objectContaining({
        id: feedback.id,
        project_id: a.project.id,
        message_id: c.assistantMessageId,
        target: c.assistantMessageId,
        rating: 'POSITIVE',
        comment: 'Clear answer',
      }),
    ]);
  });

  it('rates the whole conversation without messageId or comment, with a secret key too', async () => {
    const c = await conversationWithMessages(a);
    const res = await post(a.secretKey, { conversationId: c.id, rating: 'NEGATIVE' });
    expect(res.statusCode).toBe(201);
    const { feedback } = res.json() as { feedback: Feedback };
    expect(feedback).toEqual({ id: feedback.id, conversationId: c.id, rating: 'NEGATIVE', createdAt: feedback.createdAt });
    expect(await rows(c.id)).toEqual([expect.objectContaining({ message_id: null, target: '', comment: null })]);
  });

  it('replaces a repeat rating of the same target in place and keeps other targets apart', async () => {
    const c = await conversationWithMessages(a);
    const first = (await post(a.publicKey, { conversationId: c.id, messageId: c.assistantMessageId, rating: 'POSITIVE', comment: 'ok' })).json();
    const again = await post(a.publicKey, { conversationId: c.id, messageId: c.assistantMessageId, rating: 'NEGATIVE' });
    expect(again.statusCode).toBe(201);
    expect(again.json().feedback).toEqual({
      id: first.feedback.id,
      conversationId: c.id,
      messageId: c.assistantMessageId,
      rating: 'NEGATIVE',
      createdAt: first.feedback.createdAt,
    });
    await post(a.publicKey, { conversationId: c.id, rating: 'POSITIVE' });
    await post(a.publicKey, { conversationId: c.id, messageId: c.userMessageId, rating: 'POSITIVE' });
    const stored = await rows(c.id);
    expect(stored).toHaveLength(3);
    expect(stored.find((r) => r.target === c.assistantMessageId)).toMatchObject({ id: first.feedback.id, rating: 'NEGATIVE', comment: null });
  });

  it('keeps one row when the same rating arrives concurrently', async () => {
    const c = await conversationWithMessages(a);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(a.publicKey, { conversationId: c.id, messageId: c.assistantMessageId, rating: i % 2 ? 'POSITIVE' : 'NEGATIVE' }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.json().feedback.id)).size).toBe(1);
    expect(await rows(c.id)).toHaveLength(1);
  });

  it('answers 400 Validation error with details for a bad body', async () => {
    const c = await conversationWithMessages(a);
    const cases: Array<[unknown, string]> = [
      [{ rating: 'POSITIVE' }, 'conversationId'],
      [{ conversationId: c.id }, 'rating'],
      [{ conversationId: c.id, rating: 'MEH' }, 'rating'],
      [{ conversationId: c.id, rating: 'POSITIVE', comment: 'x'.repeat(2001) }, 'comment'],
    ];
    for (const [payload, path] of cases) {
      const res = await post(a.publicKey, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: [expect.objectContaining({ path })] });
    }
    const longest = await post(a.publicKey, { conversationId: c.id, rating: 'POSITIVE', comment: 'x'.repeat(2000) });
    expect(longest.statusCode).toBe(201);
    expect(await rows(c.id)).toEqual([expect.objectContaining({ comment: 'x'.repeat(2000) })]);
  });

  it('answers 404 Conversation not found for an unknown conversation', async () => {
    const res = await post(a.publicKey, { conversationId: 'conv_doesnotexist', rating: 'POSITIVE' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Conversation not found' });
  });

  it('answers 404 Message not found for an unknown message or one of another conversation', async () => {
    const c = await conversationWithMessages(a);
    const other = await conversationWithMessages(a);
    for (const messageId of ['msg_doesnotexist', other.assistantMessageId]) {
      const res = await post(a.publicKey, { conversationId: c.id, messageId, rating: 'POSITIVE' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Message not found' });
    }
    expect(await rows(c.id)).toEqual([]);
  });

  it("never lets another project's key rate a conversation or message", async () => {
    const c = await conversationWithMessages(a);
    const res = await post(b.publicKey, { conversationId: c.id, messageId: c.assistantMessageId, rating: 'NEGATIVE' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Conversation not found' });
    // A message of A named through B's own conversation is not found either.
    const own = await conversationWithMessages(b);
    const cross = await post(b.publicKey, { conversationId: own.id, messageId: c.assistantMessageId, rating: 'NEGATIVE' });
    expect(cross.statusCode).toBe(404);
    expect(cross.json()).toEqual({ error: 'Message not found' });
    expect(await rows(c.id)).toEqual([]);
  });

  it('needs the end user proven on a user-bound conversation when identity is required', async () => {
    const p = await createProject(t, { identityVerification: 'required' });
    const hmac = signUserId(p.hmacSecret, 'strict-user');
    const c = await conversationWithMessages(p, 'strict-user', { 'x-user-hmac': hmac });
    const refused = await post(p.publicKey, { conversationId: c.id, rating: 'POSITIVE' });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'Identity verification required' });
    const wrong = await post(p.publicKey, { conversationId: c.id, rating: 'POSITIVE' }, { 'x-user-hmac': signUserId(p.hmacSecret, 'someone-else') });
    expect(wrong.statusCode).toBe(401);
    expect(await rows(c.id)).toEqual([]);
    const ok = await post(p.publicKey, { conversationId: c.id, rating: 'POSITIVE' }, { 'x-user-hmac': hmac });
    expect(ok.statusCode).toBe(201);
    expect(await rows(c.id)).toHaveLength(1);
  });

  it('needs no identity proof in the default optional mode', async () => {
    const c = await conversationWithMessages(a, 'relaxed-user');
    const res = await post(a.publicKey, { conversationId: c.id, rating: 'POSITIVE' });
    expect(res.statusCode).toBe(201);
  });
});
