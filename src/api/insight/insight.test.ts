import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { appendMessage } from '../../conversations/messages.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { ActivityItem, Analytics } from './schema.js';
import { activityFeed } from './service.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(dialects)('admin API: activity feed and analytics on $name', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(() => t.close());

  async function conversation(p: CreatedProject, user?: string): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: user ? { endUserExternalId: user } : undefined });
    return res.json().conversationId;
  }

  /** Appends a message and pins its creation time, so the test owns the order. */
  async function message(p: CreatedProject, conversationId: string, content: string, at: number, role: 'user' | 'assistant' = 'user', status: 'complete' | 'error' = 'complete') {
    const row = await appendMessage(t.deps.store.db, { id: conversationId, project_id: p.project.id }, { role, content, status });
    await t.deps.store.db.updateTable('messages').set({ created_at: iso(at) }).where('id', '=', row.id).execute();
    return row.id;
  }

  it('serves the latest messages oldest first, then only newer ones per poll', async () => {
    const p = await createProject(t, {}, 'Feed');
    const other = await createProject(t, {}, 'Other feed');
    const conv = await conversation(p, 'feed-user');
    const t0 = Date.now() - 60_000;
    const long = 'y'.repeat(300);
    const m1 = await message(p, conv, 'first', t0);
    const m2 = await message(p, conv, long, t0 + 1000, 'assistant');
    const m3 = await message(p, conv, 'third', t0 + 2000);
    await message(other, await conversation(other), 'not yours', t0 + 1500);

    const url = `/api/v1/admin/projects/${p.project.id}/activity`;
    const first = await t.app.inject({ method: 'GET', url, headers: auth(p.secretKey) });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.messages.map((m: ActivityItem) => m.id)).toEqual([m1, m2, m3]);
    expect(body.truncated).toBe(false);
    expect(body.messages[1]).toEqual({
      id: m2,
      conversationId: conv,
      role: 'assistant',
      status: 'complete',
      preview: long.slice(0, 150),
      createdAt: iso(t0 + 1000),
      endUserExternalId: 'feed-user',
      author: { type: 'agent' },
    });
    expect(body.messages[0]).not.toHaveProperty('author');

    const idle = await t.app.inject({ method: 'GET', url: `${url}?after=${body.nextCursor}`, headers: adminAuth() });
    expect(idle.json()).toMatchObject({ messages: [], truncated: false });

    // A message written after the last poll: stamped just past its horizon; the next poll is at least
    // a few milliseconds later, so its horizon has passed the message.
    const m4 = await message(p, conv, 'fourth', Date.parse(horizonOf(idle.json().nextCursor)) + 1);
    await new Promise((r) => setTimeout(r, 5));
    const next = await t.app.inject({ method: 'GET', url: `${url}?after=${idle.json().nextCursor}`, headers: adminAuth() });
    expect(next.json().messages.map((m: ActivityItem) => m.id)).toEqual([m4]);

    const limited = await t.app.inject({ method: 'GET', url: `${url}?limit=2`, headers: adminAuth() });
    expect(limited.json().messages.map((m: ActivityItem) => m.id)).toEqual([m3, m4]);
    expect(limited.json().truncated).toBe(true);

    // A person's reply says who wrote it, as the conversation's messages do.
    const reply = await appendMessage(t.deps.store.db, { id: conv, project_id: p.project.id }, { role: 'assistant', content: 'Dana here.', status: 'complete', author: { type: 'human', id: 'user_dana', name: 'Dana' } });
    await t.deps.store.db.updateTable('messages').set({ created_at: iso(Date.now() - 5000) }).where('id', '=', reply.id).execute();
    const all = await t.app.inject({ method: 'GET', url, headers: adminAuth() });
    expect(all.json().messages.find((m: ActivityItem) => m.id === reply.id)).toMatchObject({ role: 'assistant', author: { type: 'human', id: 'user_dana', name: 'Dana' } });
  });

  /** The cursor is opaque to clients; the test reads its horizon to stamp a message just after it. */
  function horizonOf(cursor: string): string {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')).t;
  }

  it('holds back messages younger than the settle window and never skips them', async () => {
    const p = await createProject(t, {}, 'Settle');
    const conv = await conversation(p);
    const now = Date.now();
    const old = await message(p, conv, 'old', now - 10_000);
    const fresh = await message(p, conv, 'fresh', now - 200);
    const db = t.deps.store.db;
    const poll1 = await activityFeed(db, p.project.id, { limit: 50 }, now);
    expect(poll1.messages.map((m) => m.id)).toEqual([old]);
    // A message stamped before poll1's horizon but committed after it would be missed by a naive
    // "newer than the last message seen" cursor; here it is still ahead of the horizon.
    const late = await message(p, conv, 'late commit', now - 500);
    const poll2 = await activityFeed(db, p.project.id, { after: poll1.nextCursor, limit: 50 }, now + 2000);
    expect(poll2.messages.map((m) => m.id)).toEqual([late, fresh]);
    // A node whose clock is behind does not move the cursor backwards (no repeats).
    const poll3 = await activityFeed(db, p.project.id, { after: poll2.nextCursor, limit: 50 }, now - 5000);
    expect(poll3.messages).toEqual([]);
    expect(poll3.nextCursor).toBe(poll2.nextCursor);
  });

  it('rejects a bad cursor or limit and keeps projects apart', async () => {
    const p = await createProject(t, {}, 'Feed errors');
    const q = await createProject(t, {}, 'Feed other');
    const url = `/api/v1/admin/projects/${p.project.id}/activity`;
    const bad = await t.app.inject({ method: 'GET', url: `${url}?after=nope`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'after' }] });
    const big = await t.app.inject({ method: 'GET', url: `${url}?limit=51`, headers: adminAuth() });
    expect(big.statusCode).toBe(400);
    for (const suffix of ['activity', 'analytics']) {
      const foreign = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/${suffix}`, headers: auth(q.secretKey) });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual({ error: 'Project not found' });
      const pub = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/${suffix}`, headers: auth(p.publicKey) });
      expect(pub.statusCode).toBe(401);
    }
  });

  it('counts conversations, messages and feedback over the window, day by day', async () => {
    const p = await createProject(t, { conversationTtlMinutes: 60 }, 'Analytics');
    const other = await createProject(t, {}, 'Noise');
    const now = Date.now();
    const db = t.deps.store.db;
    const pin = (id: string, created: number, updated = created) =>
      db.updateTable('conversations').set({ created_at: iso(created), updated_at: iso(updated) }).where('id', '=', id).execute();

    // Today: answered, then rated positive; identified user.
    const c1 = await conversation(p, 'alice');
    await message(p, c1, 'q1', now - 60_000);
    const a1 = await message(p, c1, 'a1', now - 50_000, 'assistant');
    // A person's reply is an assistant message, but not one of the agent's answers.
    const human = await appendMessage(db, { id: c1, project_id: p.project.id }, { role: 'assistant', content: 'Dana here.', status: 'complete', author: { type: 'human', id: null, name: 'Dana' } });
    await db.updateTable('messages').set({ created_at: iso(now - 40_000) }).where('id', '=', human.id).execute();
    // Two days ago: unanswered (last message from the user), idle past the TTL, same user.
    const c2 = await conversation(p, 'alice');
    await message(p, c2, 'q2', now - 2 * DAY);
    await pin(c2, now - 2 * DAY);
    // Two days ago: answer failed, rated negative, anonymous.
    const c3 = await conversation(p);
    await message(p, c3, 'q3', now - 2 * DAY);
    const a3 = await message(p, c3, 'oops', now - 2 * DAY + 1000, 'assistant', 'error');
    await pin(c3, now - 2 * DAY, now - 2 * DAY + 1000);
    // Outside the 30-day window, and an empty conversation: neither counts.
    const c4 = await conversation(p, 'bob');
    await message(p, c4, 'ancient', now - 40 * DAY);
    await pin(c4, now - 40 * DAY);
    await conversation(p, 'carol');
    // Another project's traffic never counts.
    await message(other, await conversation(other), 'noise', now - 1000);

    for (const [conversationId, messageId, rating] of [[c1, a1, 'POSITIVE'], [c3, a3, 'NEGATIVE']] as const) {
      const fb = await t.app.inject({ method: 'POST', url: '/api/v1/chat/feedback', headers: auth(p.publicKey), payload: { conversationId, messageId, rating } });
      expect(fb.statusCode).toBe(201);
      if (conversationId === c3) await db.updateTable('feedback').set({ created_at: iso(now - 2 * DAY) }).where('id', '=', fb.json().feedback.id).execute();
    }

    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics`, headers: auth(p.secretKey) });
    expect(res.statusCode).toBe(200);
    const body: Analytics = res.json();
    expect(body.conversations).toEqual({ total: 3, active: 1, closed: 2, unanswered: 1, identified: 2, endUsers: 1 });
    expect(body.messages).toEqual({ total: 6, user: 3, assistant: 3, human: 1, failed: 1 });
    expect(body.feedback).toEqual({ positive: 1, negative: 1 });
    expect(body.rates).toEqual({ answered: 2 / 3, satisfaction: 0.5, answerFailure: 0.5 });
    expect(body.byDay).toHaveLength(30);
    const today = iso(now).slice(0, 10);
    const twoDaysAgo = iso(now - 2 * DAY).slice(0, 10);
    expect(body.byDay[29]).toEqual({ date: today, conversations: 1, messages: 3, positive: 1, negative: 0 });
    expect(body.byDay[27]).toEqual({ date: twoDaysAgo, conversations: 2, messages: 3, positive: 0, negative: 1 });
    expect(body.byDay.filter((d) => d.conversations + d.messages + d.positive + d.negative > 0)).toHaveLength(2);
    expect(body.from).toBe(`${iso(now - 29 * DAY).slice(0, 10)}T00:00:00.000Z`);
    // The busiest hours count the visitors' three messages by their UTC hour.
    expect(body.byHour.map((h) => h.hour)).toEqual([...Array(24).keys()]);
    const hourOf = (ms: number) => new Date(ms).getUTCHours();
    const expectedHours = new Map<number, number>();
    for (const at of [now - 60_000, now - 2 * DAY, now - 2 * DAY]) expectedHours.set(hourOf(at), (expectedHours.get(hourOf(at)) ?? 0) + 1);
    expect(body.byHour.filter((h) => h.messages > 0)).toEqual([...expectedHours].sort(([a], [b]) => a - b).map(([hour, messages]) => ({ hour, messages })));

    const week = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics?days=1`, headers: adminAuth() });
    expect(week.json().conversations.total).toBe(1);
    expect(week.json().byDay).toEqual([{ date: today, conversations: 1, messages: 3, positive: 1, negative: 0 }]);

    const empty = await createProject(t, {}, 'Quiet');
    const quiet = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${empty.project.id}/analytics`, headers: adminAuth() });
    expect(quiet.json().rates).toEqual({ answered: null, satisfaction: null, answerFailure: null });
    const bad = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${empty.project.id}/analytics?days=0`, headers: adminAuth() });
    expect(bad.statusCode).toBe(400);
  });

  it('lists the most asked questions, grouped when they ask the same thing', async () => {
    const p = await createProject(t, {}, 'Top questions');
    const now = Date.now();
    const asked = [
      ['How long do I have to return an item?', 50_000],
      ['Can I pay with PayPal?', 40_000],
      ['What is the return window for an item?', 30_000],
      ['thanks!', 25_000],
      ['Returning an item: how long do I have?', 20_000],
      ['Can I use PayPal to pay?', 10_000],
      ['Do you ship to Norway?', 5_000],
    ] as const;
    for (const [content, ago] of asked) await message(p, await conversation(p), content, now - ago);
    await message(p, await conversation(p), 'How long do I have to return an item?', now - 40 * 24 * 60 * 60 * 1000);

    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics`, headers: adminAuth() });
    const body: Analytics = res.json();
    expect(body.topQuestions).toEqual([
      { question: 'How long do I have to return an item?', count: 3, lastAskedAt: iso(now - 20_000) },
      { question: 'Can I pay with PayPal?', count: 2, lastAskedAt: iso(now - 10_000) },
      { question: 'Do you ship to Norway?', count: 1, lastAskedAt: iso(now - 5_000) },
    ]);
  });
});
