import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opensslHmac } from '../../../test/identity.js';
import { adminAuth, auth, createProject, createTestApp, dialects, limiterKinds, type TestApp } from '../../../test/helper.js';
import { openSse, type SseConnection } from '../../../test/sse-client.js';
import type { ProjectRole } from '../../accounts/types.js';
import { createUser } from '../../accounts/users.js';
import { projectTopic } from '../../events/bus.js';
import { base62 } from '../../lib/ids.js';
import type { CreatedProject } from '../../projects/projects.js';

const portOf = (t: TestApp) => `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

async function newConversation(t: TestApp, p: CreatedProject, userId?: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: userId ? { endUserExternalId: userId } : {} });
  return res.json().conversationId;
}

const humanReply = (t: TestApp, p: CreatedProject, id: string, content: string, name = 'Dana') =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}/messages`,
    headers: adminAuth(),
    payload: { content, author: { name } },
  });

const data = (e: { data: string }) => JSON.parse(e.data);

/** Sign-in is a write: it comes from the dashboard's own origin. */
const SAME_ORIGIN = { host: 'dash.example', 'sec-fetch-site': 'same-origin', origin: 'http://dash.example' };
const PASSWORD = 'correct horse battery';

/**
 * The live events of a conversation (SSE) through the whole app over a real port, on each database
 * and with each form of the events bus: what a widget reads while a person answers.
 */
describe.each(dialects)('conversation events on $name', (dialect) => {
  describe.each(limiterKinds)('with the $name bus', (bus) => {
    let t: TestApp;
    let base: string;
    const open: SseConnection[] = [];

    beforeAll(async () => {
      t = await createTestApp({ dialect, eventsRedisUrl: bus.url, env: { ANSWERDESK_STREAM_KEEPALIVE_MS: '100' } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = portOf(t);
    });
    afterAll(async () => {
      for (const c of open) c.close();
      await t.close();
    });

    const connect = async (p: CreatedProject, id: string, headers: Record<string, string> = {}) => {
      const c = await openSse(`${base}/api/v1/chat/conversations/${id}/events`, { ...auth(p.publicKey), ...headers });
      open.push(c);
      return c;
    };

    it('sends the handoff state on connect, then each handoff change and each new message (a person’s, with their name)', async () => {
      const p = await createProject(t);
      const id = await newConversation(t, p);
      const sse = await connect(p, id);
      expect(sse.status).toBe(200);
      expect(data(await sse.next((e) => e.event === 'handoff'))).toEqual({ conversationId: id, handoff: null });

      await t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey), payload: { reason: 'Lost parcel' } });
      const requested = await sse.next((e) => e.event === 'handoff' && data(e).handoff?.status === 'requested');
      expect(data(requested).handoff).toMatchObject({ reason: 'Lost parcel', via: 'user' });

      const posted = await humanReply(t, p, id, 'Hi, I am looking into it.');
      expect(posted.statusCode).toBe(201);
      const message = await sse.next((e) => e.event === 'message');
      expect(data(message)).toEqual({ conversationId: id, message: posted.json().message });
      expect(message.id).toBe('1');
      const active = await sse.next((e) => e.event === 'handoff' && data(e).handoff?.status === 'active');
      expect(data(active).handoff.assignee).toEqual({ id: null, name: 'Dana' });

      // The user's own message while handed off arrives too (another tab of the same visitor).
      await fetch(`${base}/api/v1/chat/messages`, {
        method: 'POST',
        headers: { ...auth(p.publicKey), 'content-type': 'application/json' },
        body: JSON.stringify({ conversationId: id, messages: [{ role: 'user', content: 'Thank you' }] }),
      }).then((r) => r.text());
      const userMessage = await sse.next((e) => e.event === 'message' && data(e).message.role === 'user');
      expect(userMessage.id).toBe('2');
      expect(sse.events.filter((e) => e.event === 'message').length).toBe(2);
      // Keep-alive comments while nothing happens.
      await new Promise((r) => setTimeout(r, 250));
      expect(sse.raw()).toContain(': keep-alive');
    });

    it('tells the visitor when the conversation is closed: the handoff is over, then `closed`; at once when it already was', async () => {
      const p = await createProject(t, { conversationTtlMinutes: 5 });
      const id = await newConversation(t, p);
      await t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey) });
      const sse = await connect(p, id);
      await sse.next((e) => e.event === 'handoff' && data(e).handoff?.status === 'requested');
      const closed = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}/close`, headers: adminAuth() });
      expect(closed.statusCode).toBe(200);
      const event = await sse.next((e) => e.event === 'closed');
      expect(data(event)).toEqual({ conversationId: id, status: 'CLOSED', closedAt: closed.json().conversation.closedAt });
      expect(sse.events.filter((e) => e.event === 'handoff').map((e) => data(e).handoff?.status ?? null)).toEqual(['requested', null]);

      // Opened on a closed conversation, or one idle past the TTL: told at once, once.
      const late = await connect(p, id);
      await late.next((e) => e.event === 'closed');
      const idle = await newConversation(t, p);
      await t.deps.store.db.updateTable('conversations').set({ updated_at: new Date(Date.now() - 6 * 60_000).toISOString() }).where('id', '=', idle).execute();
      const expired = await connect(p, idle);
      expect(data(await expired.next((e) => e.event === 'closed'))).toEqual({ conversationId: idle, status: 'CLOSED', closedAt: null });
      await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${idle}/close`, headers: adminAuth() });
      await new Promise((r) => setTimeout(r, 250));
      expect(expired.events.filter((e) => e.event === 'closed')).toHaveLength(1);
    });

    it('tells the visitor when the conversation goes idle past the TTL while the stream is open; activity first moves that on', async () => {
      const p = await createProject(t, { conversationTtlMinutes: 5 });
      // Two conversations 1.2 s before they would expire, each watched by a stream.
      const nearlyIdle = async () => {
        const id = await newConversation(t, p);
        await t.deps.store.db.updateTable('conversations').set({ updated_at: new Date(Date.now() - 5 * 60_000 + 1200).toISOString() }).where('id', '=', id).execute();
        const sse = await connect(p, id);
        await sse.next((e) => e.event === 'handoff');
        return { id, sse };
      };
      const quiet = await nearlyIdle();
      const answered = await nearlyIdle();
      expect(quiet.sse.events.filter((e) => e.event === 'closed')).toHaveLength(0);
      // A person's reply in time keeps one open for another five minutes.
      expect((await humanReply(t, p, answered.id, 'Still there?')).statusCode).toBe(201);

      // The other expires with nothing written: `closed` arrives by itself, with no closedAt, once.
      const closed = await quiet.sse.next((e) => e.event === 'closed', 5000);
      expect(data(closed)).toEqual({ conversationId: quiet.id, status: 'CLOSED', closedAt: null });
      const read = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations/${quiet.id}`, headers: adminAuth() });
      expect(read.json().conversation.status).toBe('CLOSED');
      await new Promise((r) => setTimeout(r, 600));
      expect(quiet.sse.events.filter((e) => e.event === 'closed')).toHaveLength(1);
      expect(answered.sse.events.filter((e) => e.event === 'closed')).toHaveLength(0);
    });

    it('resumes after Last-Event-ID: the messages stored since are replayed from the store, in order, once', async () => {
      const p = await createProject(t);
      const id = await newConversation(t, p);
      for (const text of ['one', 'two', 'three']) expect((await humanReply(t, p, id, text)).statusCode).toBe(201);
      const sse = await connect(p, id, { 'last-event-id': '1' });
      await sse.next((e) => e.event === 'message' && data(e).message.content === 'three');
      const replayed = sse.events.filter((e) => e.event === 'message');
      expect(replayed.map((e) => [e.id, data(e).message.content])).toEqual([
        ['2', 'two'],
        ['3', 'three'],
      ]);
      await humanReply(t, p, id, 'four');
      await sse.next((e) => e.event === 'message' && data(e).message.content === 'four');
      expect(sse.events.filter((e) => e.event === 'message').map((e) => e.id)).toEqual(['2', '3', '4']);

      const bad = await fetch(`${base}/api/v1/chat/conversations/${id}/events`, { headers: { ...auth(p.publicKey), 'last-event-id': 'abc' } });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toBe('Validation error');
    });

    it('applies the conversation’s rules: another project’s 404, no key 401, identity proof when the project requires it', async () => {
      const p = await createProject(t, { identityVerification: 'required' });
      const other = await createProject(t);
      const hmac = opensslHmac(p.hmacSecret, 'user-7');
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/conversations',
        headers: auth(p.publicKey, { 'x-user-hmac': hmac }),
        payload: { endUserExternalId: 'user-7' },
      });
      const id = created.json().conversationId;
      expect((await fetch(`${base}/api/v1/chat/conversations/${id}/events`)).status).toBe(401);
      expect((await fetch(`${base}/api/v1/chat/conversations/${id}/events`, { headers: auth(other.publicKey) })).status).toBe(404);
      const unproven = await fetch(`${base}/api/v1/chat/conversations/${id}/events`, { headers: auth(p.publicKey) });
      expect(unproven.status).toBe(401);
      expect(await unproven.json()).toEqual({ error: 'Identity verification required' });
      const proven = await connect(p, id, { 'x-user-hmac': hmac });
      expect(proven.status).toBe(200);
      await proven.next((e) => e.event === 'handoff');
    });

    it('ends a conversation stream once its identity proof would be refused: the HMAC secret rotated, the stream proven with the new one stays', async () => {
      const p = await createProject(t, { identityVerification: 'required' });
      const oldHmac = opensslHmac(p.hmacSecret, 'user-8');
      const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey, { 'x-user-hmac': oldHmac }), payload: { endUserExternalId: 'user-8' } });
      const id = created.json().conversationId;
      const proven = await connect(p, id, { 'x-user-hmac': oldHmac });
      expect(proven.status).toBe(200);
      await proven.next((e) => e.event === 'handoff');

      const rotated = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/hmac-secret/rotate`, headers: adminAuth() });
      expect(rotated.statusCode).toBe(200);
      const newHmac = opensslHmac(rotated.json().hmacSecret, 'user-8');
      const reproven = await connect(p, id, { 'x-user-hmac': newHmac });
      expect(reproven.status).toBe(200);
      await reproven.next((e) => e.event === 'handoff');
      const within = (c: SseConnection) => Promise.race([c.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 5000))]);
      expect(await within(proven)).toBe('ended');
      // What its reconnect would get; the stream proven with the new secret still hears of changes.
      expect((await fetch(`${base}/api/v1/chat/conversations/${id}/events`, { headers: auth(p.publicKey, { 'x-user-hmac': oldHmac }) })).status).toBe(401);
      expect((await humanReply(t, p, id, 'Still here.')).statusCode).toBe(201);
      expect(data(await reproven.next((e) => e.event === 'message')).message.content).toBe('Still here.');
    });

    it('a stream ended by its check writes nothing more, even a change published in the same turn', async () => {
      const p = await createProject(t);
      const url = `/api/v1/admin/projects/${p.project.id}/events`;
      const inbox = await openSse(`${base}${url}`, adminAuth());
      open.push(inbox);
      await waitForReady(inbox);
      const check = t.app.stillAuthorized;
      t.app.stillAuthorized = async (request) => {
        if (request.url !== url) return check(request);
        // Refused; a conversation of the project changes a few microtasks later: after the end,
        // before the response has reported itself closed.
        void (async () => {
          for (let i = 0; i < 20; i++) await null;
          await t.deps.events.publish(projectTopic(p.project.id), { type: 'message', conversationId: 'conv_late' });
        })();
        return null;
      };
      try {
        await inbox.ended;
        // A write after the end would have been an 'error' on the response, uncaught: the process gone.
        await new Promise((r) => setTimeout(r, 200));
        expect(inbox.raw()).not.toContain('conv_late');
      } finally {
        t.app.stillAuthorized = check;
      }
    });

    it('the admin stream tells the inbox which conversation changed; public keys cannot open it', async () => {
      const p = await createProject(t);
      const id = await newConversation(t, p);
      const inbox = await openSse(`${base}/api/v1/admin/projects/${p.project.id}/events`, adminAuth());
      open.push(inbox);
      expect(inbox.status).toBe(200);
      await waitForReady(inbox);
      await t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey) });
      expect(data(await inbox.next((e) => e.event === 'conversation'))).toEqual({ conversationId: id, type: 'handoff' });
      // A teammate closing it elsewhere reaches the inbox too.
      await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${id}/close`, headers: adminAuth() });
      expect(data(await inbox.next((e) => e.event === 'conversation' && data(e).type === 'closed'))).toEqual({ conversationId: id, type: 'closed' });
      expect((await fetch(`${base}/api/v1/admin/projects/${p.project.id}/events`, { headers: auth(p.publicKey) })).status).toBe(401);
      const otherKey = await createProject(t);
      expect((await fetch(`${base}/api/v1/admin/projects/${p.project.id}/events`, { headers: { authorization: `Bearer ${otherKey.secretKey}` } })).status).toBe(404);
    });

    it('ends a stream once its credential would be refused: a session signed out, a user taken off the project, a revoked key; others stay open', async () => {
      const p = await createProject(t);
      const inboxUrl = `${base}/api/v1/admin/projects/${p.project.id}/events`;
      const signedIn = async (role: ProjectRole) => {
        const email = `stream-${role}-${base62(8).toLowerCase()}@example.com`;
        const user = await createUser(t.deps.store.db, { email, name: `A ${role}`, role: 'member', password: PASSWORD, memberships: [{ projectId: p.project.id, role }] });
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: SAME_ORIGIN, payload: { email, password: PASSWORD } });
        expect(res.statusCode).toBe(200);
        return { user, cookie: `answerdesk_session=${/answerdesk_session=([^;]*)/.exec(String(res.headers['set-cookie']))![1]}` };
      };
      const inbox = async (headers: Record<string, string>) => {
        const c = await openSse(inboxUrl, headers);
        open.push(c);
        expect(c.status).toBe(200);
        await waitForReady(c);
        return c;
      };
      const leaving = await signedIn('agent');
      const removed = await signedIn('viewer');
      const staying = await signedIn('agent');
      const newKey = async (kind: 'public' | 'secret') => {
        const body = (await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers: adminAuth(), payload: { kind } })).json();
        return { id: body.key.id as string, key: body.secret as string };
      };
      const key = await newKey('secret');
      const widgetKey = await newKey('public');
      const streams = {
        leaving: await inbox({ cookie: leaving.cookie }),
        removed: await inbox({ cookie: removed.cookie }),
        staying: await inbox({ cookie: staying.cookie }),
        key: await inbox({ authorization: `Bearer ${key.key}` }),
        admin: await inbox(adminAuth()),
      };
      // A check is not a use: the session's sliding expiry stays where the last request left it.
      const lastSeen = new Date(Date.now() - 5 * 60_000).toISOString();
      await t.deps.store.db.updateTable('sessions').set({ last_seen_at: lastSeen }).where('user_id', '=', staying.user.id).execute();
      const id = await newConversation(t, p);
      const widget = await openSse(`${base}/api/v1/chat/conversations/${id}/events`, auth(widgetKey.key));
      open.push(widget);
      await widget.next((e) => e.event === 'handoff');
      const current = await connect(p, id);
      await current.next((e) => e.event === 'handoff');

      expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...SAME_ORIGIN, cookie: leaving.cookie } })).statusCode).toBe(204);
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${removed.user.id}/memberships/${p.project.id}`, headers: adminAuth() })).statusCode).toBe(204);
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${p.project.id}/keys/${key.id}`, headers: adminAuth() })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${p.project.id}/keys/${widgetKey.id}`, headers: adminAuth() })).statusCode).toBe(200);
      const within = (c: SseConnection) => Promise.race([c.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 5000))]);
      expect(await Promise.all([within(streams.leaving), within(streams.removed), within(streams.key), within(widget)])).toEqual(['ended', 'ended', 'ended', 'ended']);

      // The streams whose credentials still hold keep going and still hear of changes.
      await t.app.inject({ method: 'POST', url: `/api/v1/chat/conversations/${id}/handoff`, headers: auth(p.publicKey) });
      for (const c of [streams.staying, streams.admin]) expect(data(await c.next((e) => e.event === 'conversation'))).toEqual({ conversationId: id, type: 'handoff' });
      await current.next((e) => e.event === 'handoff' && data(e).handoff?.status === 'requested');
      const session = await t.deps.store.db.selectFrom('sessions').select('last_seen_at').where('user_id', '=', staying.user.id).executeTakeFirstOrThrow();
      expect(session.last_seen_at).toBe(lastSeen);
      // What their reconnect would get: the answer a new request gets.
      expect((await fetch(inboxUrl, { headers: { cookie: leaving.cookie } })).status).toBe(401);
      expect((await fetch(inboxUrl, { headers: { cookie: removed.cookie } })).status).toBe(404);
      expect((await fetch(inboxUrl, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(401);
    });
  });
});

async function waitForReady(c: SseConnection): Promise<void> {
  for (let i = 0; i < 200 && !c.raw().includes(': ready'); i++) await new Promise((r) => setTimeout(r, 10));
}

/**
 * Two nodes on one PostgreSQL database and one Redis: a person's reply written through node A
 * reaches a widget whose event stream is open on node B.
 */
describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)('conversation events across two nodes (PostgreSQL + Redis)', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const prefix = `test:${base62(8)}:`;
    const dialect = dialects.find((d) => d.name === 'postgres')!;
    a = await createTestApp({ dialect, eventsRedisUrl: process.env.TEST_REDIS_URL, eventsPrefix: prefix });
    b = await createTestApp({ dialect, store: a.deps.store, eventsRedisUrl: process.env.TEST_REDIS_URL, eventsPrefix: prefix });
    await a.app.listen({ port: 0, host: '127.0.0.1' });
    await b.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a reply through node A reaches the stream on node B', async () => {
    const p = await createProject(a);
    const id = await newConversation(a, p);
    const onB = await openSse(`${portOf(b)}/api/v1/chat/conversations/${id}/events`, auth(p.publicKey));
    try {
      await onB.next((e) => e.event === 'handoff');
      const posted = await humanReply(a, p, id, 'Hello from node A.');
      expect(posted.statusCode).toBe(201);
      const message = await onB.next((e) => e.event === 'message', 5000);
      expect(data(message).message).toMatchObject({ content: 'Hello from node A.', author: { type: 'human', name: 'Dana' } });
      const active = await onB.next((e) => e.event === 'handoff' && data(e).handoff !== null, 5000);
      expect(data(active).handoff.status).toBe('active');
    } finally {
      onB.close();
    }
  });
});
