import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { appendMessage } from '../../conversations/messages.js';
import { signUserId } from '../../lib/keys.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { AdminConversation } from './admin-schema.js';

describe.each(dialects)('admin API: conversations on $name', (dialect) => {
  let t: TestApp;
  let a: CreatedProject;
  let b: CreatedProject;
  const base = (p: CreatedProject) => `/api/v1/admin/projects/${p.project.id}/conversations`;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  // Each test its own project(s): none sees another's rows or rate-limit counts.
  beforeEach(async () => {
    a = await createProject(t, { conversationTtlMinutes: 60 });
    b = await createProject(t, {}, 'Beta');
  });
  afterAll(() => t.close());

  /** A conversation through the runtime API, with messages, its updatedAt pinned `minutesAgo`. */
  async function conversation(p: CreatedProject, opts: { user?: string; messages?: string[]; minutesAgo?: number; createdMinutesAgo?: number } = {}) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: auth(p.publicKey),
      payload: opts.user ? { endUserExternalId: opts.user } : undefined,
    });
    const id: string = res.json().conversationId;
    for (const [i, content] of (opts.messages ?? ['hello']).entries()) {
      await appendMessage(t.deps.store.db, { id, project_id: p.project.id }, { role: i % 2 ? 'assistant' : 'user', content, status: 'complete', model: i % 2 ? 'builtin' : null });
    }
    const set: { updated_at?: string; created_at?: string } = {};
    if (opts.minutesAgo !== undefined) set.updated_at = new Date(Date.now() - opts.minutesAgo * 60_000).toISOString();
    if (opts.createdMinutesAgo !== undefined) set.created_at = new Date(Date.now() - opts.createdMinutesAgo * 60_000).toISOString();
    if (Object.keys(set).length) await t.deps.store.db.updateTable('conversations').set(set).where('id', '=', id).execute();
    return id;
  }

  it('lists conversations newest first with end-user info, skipping empty ones unless asked', async () => {
    const p = await createProject(t, {}, 'Lister');
    const anon = await conversation(p, { minutesAgo: 3 });
    const named = await conversation(p, { user: 'cust-1', messages: ['Where is my order?', 'It ships today.'], minutesAgo: 1 });
    const empty = await conversation(p, { messages: [] });
    await t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(p.publicKey), payload: { userId: 'cust-1', hmac: signUserId(p.hmacSecret, 'cust-1'), email: 'c1@example.com', name: 'Cee One' } });

    const res = await t.app.inject({ method: 'GET', url: base(p), headers: auth(p.secretKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.conversations.map((c: AdminConversation) => c.id)).toEqual([named, anon]);
    expect(body.nextCursor).toBeUndefined();
    const first: AdminConversation = body.conversations[0];
    const endUser = await t.deps.store.db.selectFrom('end_users').selectAll().where('project_id', '=', p.project.id).where('external_id', '=', 'cust-1').executeTakeFirstOrThrow();
    expect(first).toMatchObject({
      status: 'ACTIVE',
      messageCount: 2,
      lastMessagePreview: 'It ships today.',
      lastMessageRole: 'ASSISTANT',
      closedAt: null,
      endUser: { id: endUser.id, externalId: 'cust-1', email: 'c1@example.com', name: 'Cee One', verified: true },
    });
    expect(body.conversations[1].endUser).toBeNull();

    const all = await t.app.inject({ method: 'GET', url: `${base(p)}?includeEmpty=true`, headers: adminAuth() });
    expect(all.json().conversations.map((c: AdminConversation) => c.id)).toEqual([empty, named, anon]);
    expect(all.json().conversations[0]).toMatchObject({ messageCount: 0, lastMessagePreview: null, lastMessageRole: null });
  });

  it('filters by status (TTL-computed), external user id, end-user id and start time', async () => {
    const p = await createProject(t, { conversationTtlMinutes: 30 }, 'Filters');
    const fresh = await conversation(p, { user: 'u-a', minutesAgo: 1, createdMinutesAgo: 10 });
    const idle = await conversation(p, { user: 'u-b', minutesAgo: 45, createdMinutesAgo: 50 });
    const closed = await conversation(p, { user: 'u-a', minutesAgo: 2, createdMinutesAgo: 3 * 24 * 60 });
    await t.app.inject({ method: 'POST', url: `${base(p)}/${closed}/close`, headers: adminAuth() });

    const ids = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `${base(p)}?${query}`, headers: adminAuth() });
      expect(res.statusCode).toBe(200);
      return res.json().conversations.map((c: AdminConversation) => c.id);
    };
    expect(await ids('status=ACTIVE')).toEqual([fresh]);
    expect(await ids('status=CLOSED')).toEqual([closed, idle]);
    expect(await ids('userId=u-a')).toEqual([fresh, closed]);
    const ub = await t.deps.store.db.selectFrom('end_users').select('id').where('project_id', '=', p.project.id).where('external_id', '=', 'u-b').executeTakeFirstOrThrow();
    expect(await ids(`endUserId=${ub.id}`)).toEqual([idle]);
    expect(await ids('userId=u-a&status=CLOSED')).toEqual([closed]);
    const dayAgo = new Date(Date.now() - 24 * 3600_000).toISOString();
    expect(await ids(`from=${dayAgo}`)).toEqual([fresh, idle]);
    expect(await ids(`to=${dayAgo}`)).toEqual([closed]);
    expect(await ids('userId=nobody')).toEqual([]);

    const idleRow = (await t.app.inject({ method: 'GET', url: `${base(p)}/${idle}`, headers: adminAuth() })).json().conversation;
    expect(idleRow).toMatchObject({ status: 'CLOSED', closedAt: null });

    const bad = await t.app.inject({ method: 'GET', url: `${base(p)}?status=OPEN&limit=101&from=yesterday`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { path: string }) => d.path).sort()).toEqual(['from', 'limit', 'status']);
  });

  it('filters by feedback: positive, negative, any rating, none', async () => {
    const p = await createProject(t, {}, 'Rated');
    const rate = async (id: string, rating: 'POSITIVE' | 'NEGATIVE', onMessage = false) => {
      const msgs = await t.deps.store.db.selectFrom('messages').select('id').where('conversation_id', '=', id).orderBy('seq').execute();
      const payload = { conversationId: id, rating, ...(onMessage ? { messageId: msgs[1].id } : {}) };
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(p.publicKey), payload });
      expect(res.statusCode).toBe(201);
    };
    const liked = await conversation(p, { messages: ['a', 'b'], minutesAgo: 4 });
    const disliked = await conversation(p, { messages: ['a', 'b'], minutesAgo: 3 });
    const mixed = await conversation(p, { messages: ['a', 'b'], minutesAgo: 2 });
    const unrated = await conversation(p, { messages: ['a', 'b'], minutesAgo: 1 });
    await rate(liked, 'POSITIVE');
    await rate(disliked, 'NEGATIVE', true);
    await rate(mixed, 'POSITIVE');
    await rate(mixed, 'NEGATIVE', true);
    // Another project's ratings never leak into this list.
    const foreign = await conversation(b, { messages: ['a', 'b'] });
    const fb = await t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(b.publicKey), payload: { conversationId: foreign, rating: 'POSITIVE' } });
    expect(fb.statusCode).toBe(201);

    const ids = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `${base(p)}?${query}`, headers: adminAuth() });
      expect(res.statusCode).toBe(200);
      return res.json().conversations.map((c: AdminConversation) => c.id);
    };
    expect(await ids('feedback=positive')).toEqual([mixed, liked]);
    expect(await ids('feedback=negative')).toEqual([mixed, disliked]);
    expect(await ids('feedback=any')).toEqual([mixed, disliked, liked]);
    expect(await ids('feedback=none')).toEqual([unrated]);
    expect(await ids('feedback=negative&limit=1')).toEqual([mixed]);

    const bad = await t.app.inject({ method: 'GET', url: `${base(p)}?feedback=great`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'feedback' }] });
  });

  it('pages with a cursor (limit 1..100) and rejects a bad cursor', async () => {
    const p = await createProject(t, {}, 'Pager');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await conversation(p, { minutesAgo: 10 - i }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await t.app.inject({ method: 'GET', url: `${base(p)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: adminAuth() });
      const body = res.json();
      expect(body.conversations.length).toBeLessThanOrEqual(2);
      seen.push(...body.conversations.map((c: AdminConversation) => c.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const bad = await t.app.inject({ method: 'GET', url: `${base(p)}?cursor=zzz`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'cursor' }] });
    const zero = await t.app.inject({ method: 'GET', url: `${base(p)}?limit=0`, headers: adminAuth() });
    expect(zero.statusCode).toBe(400);
  });

  it('reads paging sizes and day counts as decimal whole numbers, on every admin route that takes one', async () => {
    const project = `/api/v1/admin/projects/${a.project.id}`;
    const routes: Array<[string, string]> = [
      [`${project}/conversations?`, 'limit'],
      [`${project}/activity?`, 'limit'],
      [`${project}/analytics?`, 'days'],
      [`${project}/gaps?`, 'days'],
      [`${project}/knowledge/search?q=returns&`, 'limit'],
      [`${project}/actions/act_x/calls?`, 'limit'],
      [`${project}/webhooks/wh_x/deliveries?`, 'limit'],
    ];
    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: adminAuth() });
    for (const [route, name] of routes) {
      // "0x10" is not 16, "1e1" not 10, "0b11" not 3, and nothing is not 0.
      for (const value of ['0x10', '1e1', '0b11', '', '%205', '-3', '2.5']) {
        const res = await get(`${route}${name}=${value}`);
        expect([route, value, res.statusCode, res.json()]).toEqual([
          route,
          value,
          400,
          { error: 'Validation error', details: [{ path: name, message: 'must be a whole number written in decimal digits' }] },
        ]);
      }
      const twice = await get(`${route}${name}=1&${name}=2`);
      expect([route, twice.statusCode, twice.json()]).toEqual([route, 400, { error: 'Validation error', details: [{ path: name, message: 'must be given once' }] }]);
      // Decimal digits are read as they always were, range checks included.
      expect([route, (await get(`${route}${name}=7`)).statusCode]).toEqual([route, route.includes('_x/') ? 404 : 200]);
      expect([route, (await get(`${route}${name}=0`)).json().details]).toEqual([route, [{ path: name, message: 'Too small: expected number to be >=1' }]]);
    }
  });

  it('reads a conversation with its messages and feedback', async () => {
    const id = await conversation(a, { user: 'reader', messages: ['How do refunds work?', 'Within 30 days.'] });
    const msgs = await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', id).orderBy('seq').execute();
    const fb = await t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(a.publicKey), payload: { conversationId: id, messageId: msgs[1].id, rating: 'NEGATIVE', comment: 'Too short' } });
    expect(fb.statusCode).toBe(201);

    const res = await t.app.inject({ method: 'GET', url: `${base(a)}/${id}`, headers: auth(a.secretKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.conversation).toMatchObject({ id, messageCount: 2, endUser: { externalId: 'reader', verified: false } });
    expect(body.messages.map((m: { id: string; role: string; content: string; model: string | null }) => [m.id, m.role, m.content, m.model])).toEqual([
      [msgs[0].id, 'user', 'How do refunds work?', null],
      [msgs[1].id, 'assistant', 'Within 30 days.', 'builtin'],
    ]);
    expect(body.feedback).toEqual([
      { id: fb.json().feedback.id, messageId: msgs[1].id, rating: 'NEGATIVE', comment: 'Too short', createdAt: expect.any(String) },
    ]);
  });

  it('closes a conversation: stored CLOSED, shown CLOSED to the runtime, idempotent', async () => {
    const id = await conversation(a, { user: 'closer' });
    const res = await t.app.inject({ method: 'POST', url: `${base(a)}/${id}/close`, headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    const conv = res.json().conversation;
    expect(conv).toMatchObject({ id, status: 'CLOSED', closedAt: expect.stringMatching(/Z$/) });
    const row = await t.deps.store.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'CLOSED', closed_at: conv.closedAt });

    const runtime = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=closer', headers: auth(a.publicKey) });
    expect(runtime.json().conversations).toEqual([expect.objectContaining({ id, status: 'CLOSED' })]);
    const send = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(a.publicKey),
      payload: { conversationId: id, messages: [{ role: 'user', content: 'anyone there?' }] },
    });
    expect(send.statusCode).toBe(400);
    expect(send.json()).toEqual({ error: 'Conversation expired' });
    const stored = await t.deps.store.db.selectFrom('messages').select('content').where('conversation_id', '=', id).execute();
    expect(stored.map((m) => m.content)).toEqual(['hello']);

    const again = await t.app.inject({ method: 'POST', url: `${base(a)}/${id}/close`, headers: adminAuth() });
    expect(again.statusCode).toBe(200);
    expect(again.json().conversation.closedAt).toBe(conv.closedAt);
  });

  it('answers 404 Conversation not found for unknown and foreign conversations', async () => {
    const bConv = await conversation(b, { user: 'b-user', messages: ['b private'] });
    for (const [method, suffix] of [['GET', ''], ['POST', '/close']] as const) {
      const unknown = await t.app.inject({ method, url: `${base(a)}/conv_nope${suffix}`, headers: adminAuth() });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({ error: 'Conversation not found' });
      // B's conversation through A's project path: unknown there.
      const viaA = await t.app.inject({ method, url: `${base(a)}/${bConv}${suffix}`, headers: auth(a.secretKey) });
      expect(viaA.statusCode).toBe(404);
      expect(viaA.json()).toEqual({ error: 'Conversation not found' });
      // A's secret key on B's path: B's project does not exist for it.
      const viaB = await t.app.inject({ method, url: `${base(b)}/${bConv}${suffix}`, headers: auth(a.secretKey) });
      expect(viaB.statusCode).toBe(404);
      expect(viaB.json()).toEqual({ error: 'Project not found' });
    }
    const list = await t.app.inject({ method: 'GET', url: base(b), headers: auth(a.secretKey) });
    expect(list.statusCode).toBe(404);
    const aList = await t.app.inject({ method: 'GET', url: `${base(a)}?userId=b-user`, headers: auth(a.secretKey) });
    expect(aList.json().conversations).toEqual([]);
    const row = await t.deps.store.db.selectFrom('conversations').select('status').where('id', '=', bConv).executeTakeFirstOrThrow();
    expect(row.status).toBe('ACTIVE');
    const pub = await t.app.inject({ method: 'GET', url: base(a), headers: auth(a.publicKey) });
    expect(pub.statusCode).toBe(401);
  });
});
