import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { appendMessage } from '../../conversations/messages.js';
import type { CreatedProject } from '../../projects/projects.js';

describe.each(dialects)('conversations on $name', (dialect) => {
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

  it('creates a conversation tied to a new end user and stores both rows', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(a.publicKey),
      payload: { endUserExternalId: 'user-42' },
    });
    expect(res.statusCode).toBe(201);
    const { conversationId } = res.json();
    expect(conversationId).toMatch(/^conv_[0-9A-Za-z]{22}$/);
    const row = await t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', conversationId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ project_id: a.project.id, status: 'ACTIVE', message_count: 0 });
    const user = await t.deps.store.db.selectFrom('end_users').selectAll().where('id', '=', row.end_user_id!).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ external_id: 'user-42', verified_at: null, project_id: a.project.id });
  });

  it('accepts no body, an empty body and Authorization: Bearer', async () => {
    const none = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: { authorization: `Bearer ${a.publicKey}` } });
    expect(none.statusCode).toBe(201);
    const empty = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: { ...auth(a.secretKey), 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(201);
  });

  it('rejects a bad endUserExternalId with details', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(a.publicKey),
      payload: { endUserExternalId: '' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'endUserExternalId' }] });
  });

  it('lists only conversations with messages, newest first, with cursor paging', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey), payload: { endUserExternalId: 'lister' } });
      ids.push(res.json().conversationId);
    }
    const conv = (id: string) => ({ id, project_id: a.project.id });
    for (const id of ids.slice(0, 3)) await appendMessage(t.deps.store.db, conv(id), { role: 'user', content: `hello ${id}`, status: 'complete' });
    const long = 'x'.repeat(400);
    await appendMessage(t.deps.store.db, conv(ids[0]), { role: 'assistant', content: long, status: 'complete' });
    // Appends within one millisecond tie on updatedAt; pin distinct times so the order is the test's.
    const minutesAgo = [1, 3, 2];
    for (const [i, m] of minutesAgo.entries()) {
      await t.deps.store.db.updateTable('conversations').set({ updated_at: new Date(Date.now() - m * 60_000).toISOString() }).where('id', '=', ids[i]).execute();
    }

    const first = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=lister&limit=2', headers: auth(a.publicKey) });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.conversations.map((c: { id: string }) => c.id)).toEqual([ids[0], ids[2]]);
    expect(body.conversations[0]).toMatchObject({
      status: 'ACTIVE',
      messageCount: 2,
      lastMessageRole: 'ASSISTANT',
      lastMessagePreview: long.slice(0, 150),
    });
    expect(body.nextCursor).toBeTypeOf('string');
    const second = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations?userId=lister&limit=2&cursor=${body.nextCursor}`,
      headers: auth(a.publicKey),
    });
    expect(second.json()).toEqual({ conversations: [expect.objectContaining({ id: ids[1], lastMessageRole: 'USER' })] });
  });

  it('cuts the preview before an emoji that straddles its 150th character, the same on both databases', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey), payload: { endUserExternalId: 'emoji' } });
    const id = created.json().conversationId as string;
    // 149 letters, then an emoji of two UTF-16 units: a cut at 150 kept half of it, which SQLite
    // stored as bytes that are not UTF-8 (read back as three U+FFFD) and PostgreSQL as one U+FFFD.
    const content = `${'a'.repeat(149)}😀 and more`;
    await appendMessage(t.deps.store.db, { id, project_id: a.project.id }, { role: 'user', content, status: 'complete' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=emoji', headers: auth(a.publicKey) });
    expect(res.json().conversations[0].lastMessagePreview).toBe('a'.repeat(149));
    const whole = `${'a'.repeat(148)}😀 and more`;
    await appendMessage(t.deps.store.db, { id, project_id: a.project.id }, { role: 'user', content: whole, status: 'complete' });
    const again = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=emoji', headers: auth(a.publicKey) });
    expect(again.json().conversations[0].lastMessagePreview).toBe(`${'a'.repeat(148)}😀`);
  });

  it('requires userId and rejects a bad cursor', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers: auth(a.publicKey) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'userId' }] });
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=u&cursor=zzz', headers: auth(a.publicKey) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'cursor' }] });
  });

  it('reads limit as a decimal whole number given once, in the spec\'s validation error shape', async () => {
    const list = (query: string) => t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations?userId=u&${query}`, headers: auth(a.publicKey) });
    // "0x10" is not 16, "1e1" not 10, "0b11" not 3, and nothing is not 0.
    for (const value of ['0x10', '1e1', '0b11', '', '%205', '-3', '2.5']) {
      const res = await list(`limit=${value}`);
      expect([value, res.statusCode, res.json()]).toEqual([
        value,
        400,
        { error: 'Validation error', details: [{ path: 'limit', message: 'must be a whole number written in decimal digits' }] },
      ]);
    }
    const twice = await list('limit=1&limit=2');
    expect([twice.statusCode, twice.json()]).toEqual([400, { error: 'Validation error', details: [{ path: 'limit', message: 'must be given once' }] }]);
    expect((await list('limit=7')).json()).toEqual({ conversations: [] });
    expect((await list('limit=21')).json()).toEqual({ error: 'Validation error', details: [{ path: 'limit', message: 'Too big: expected number to be <=20' }] });
  });

  it('returns the ordered history and 404 for unknown or foreign conversations', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey) });
    const id = created.json().conversationId;
    const c = { id, project_id: a.project.id };
    await appendMessage(t.deps.store.db, c, { role: 'user', content: 'first', status: 'complete' });
    await appendMessage(t.deps.store.db, c, { role: 'assistant', content: 'second', status: 'complete', sources: [{ url: 'https://x.test/a', title: 'A' }] });

    const res = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(a.publicKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.conversationId).toBe(id);
    expect(body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'first'],
      ['assistant', 'second'],
    ]);
    expect(body.messages[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body.messages[1]).toMatchObject({ status: 'complete', sources: [{ url: 'https://x.test/a' }] });

    const foreign = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(b.publicKey) });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'Conversation not found' });
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations/conv_nope', headers: auth(a.publicKey) });
    expect(unknown.json()).toEqual({ error: 'Conversation not found' });
  });

  it("never lists another project's conversations for the same user id", async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(a.publicKey), payload: { endUserExternalId: 'shared-id' } });
    await appendMessage(t.deps.store.db, { id: created.json().conversationId, project_id: a.project.id }, { role: 'user', content: 'secret', status: 'complete' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=shared-id', headers: auth(b.publicKey) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ conversations: [] });
  });

  it('marks a conversation idle past the TTL as CLOSED when read', async () => {
    const p = await createProject(t, { conversationTtlMinutes: 1 });
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: { endUserExternalId: 'idle' } });
    const id = created.json().conversationId;
    await appendMessage(t.deps.store.db, { id, project_id: p.project.id }, { role: 'user', content: 'hi', status: 'complete' });
    await t.deps.store.db.updateTable('conversations').set({ updated_at: new Date(Date.now() - 120_000).toISOString() }).where('id', '=', id).execute();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=idle', headers: auth(p.publicKey) });
    expect(res.json().conversations[0]).toMatchObject({ id, status: 'CLOSED' });
  });
});
