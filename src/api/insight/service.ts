import { sql, type Kysely } from 'kysely';
import { BadRequest } from '../../lib/errors.js';
import type { Database } from '../../store/index.js';
import { DEFAULT_TTL_MINUTES, type Project } from '../projects/schema.js';
import { PREVIEW_LENGTH } from '../conversations/service.js';
import type { ActivityItem, Analytics } from './schema.js';

type Db = Kysely<Database>;

/**
 * How old a message must be before the feed shows it. A message is stamped before its transaction
 * commits, and nodes' clocks differ a little, so a message can become visible with a time just
 * before a cursor already handed out; waiting this long before moving the cursor past a time means
 * such messages are not skipped. One second is well inside the dashboard's 2 s poll.
 */
export const ACTIVITY_SETTLE_MS = 1000;

function encodeActivityCursor(horizon: string): string {
  return Buffer.from(JSON.stringify({ t: horizon })).toString('base64url');
}

function decodeActivityCursor(raw: string): string {
  try {
    const { t } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { t?: unknown };
    if (typeof t === 'string' && !Number.isNaN(Date.parse(t))) return new Date(t).toISOString();
  } catch {
    // fall through to the validation error
  }
  throw BadRequest('Validation error', { details: [{ path: 'after', message: 'Invalid cursor' }] });
}

/**
 * The live activity feed: messages written after the cursor (all recent ones without a cursor), at
 * most `limit`, the newest ones when more arrived, returned oldest first. The cursor is a time
 * horizon, so polling is stateless and each message appears in exactly one poll.
 */
export async function activityFeed(
  db: Db,
  projectId: string,
  page: { after?: string; limit: number },
  at = Date.now(),
): Promise<{ messages: ActivityItem[]; nextCursor: string; truncated: boolean }> {
  const since = page.after ? decodeActivityCursor(page.after) : null;
  const settled = new Date(at - ACTIVITY_SETTLE_MS).toISOString();
  // Never move backwards, even when this node's clock is behind the one that issued the cursor.
  const horizon = since && since > settled ? since : settled;
  let q = db
    .selectFrom('messages as m')
    .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
    .leftJoin('end_users as u', 'u.id', 'c.end_user_id')
    .select(['m.id', 'm.conversation_id', 'm.role', 'm.status', 'm.content', 'm.created_at', 'u.external_id'])
    .where('m.project_id', '=', projectId)
    .where('m.created_at', '<=', horizon);
  if (since) q = q.where('m.created_at', '>', since);
  const rows = await q.orderBy('m.created_at', 'desc').orderBy('m.id', 'desc').limit(page.limit + 1).execute();
  const truncated = rows.length > page.limit;
  const messages = rows
    .slice(0, page.limit)
    .reverse()
    .map((r) => ({
      id: r.id,
      conversationId: r.conversation_id,
      role: r.role,
      status: r.status,
      preview: r.content.slice(0, PREVIEW_LENGTH),
      createdAt: r.created_at,
      endUserExternalId: r.external_id ?? null,
    }));
  return { messages, nextCursor: encodeActivityCursor(horizon), truncated };
}

const DAY_MS = 86_400_000;
const day = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, 10)`;
const n = (v: unknown) => Number(v ?? 0);
const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/**
 * Counts over the last `days` UTC days (today included), computed with aggregate queries on both
 * databases. Conversation figures cover conversations started in the window that have a message.
 */
export async function projectAnalytics(db: Db, project: Project, days: number, at = Date.now()): Promise<Analytics> {
  const todayStart = Math.floor(at / DAY_MS) * DAY_MS;
  const from = new Date(todayStart - (days - 1) * DAY_MS).toISOString();
  const cutoff = new Date(at - (project.settings.conversationTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000).toISOString();

  const conv = await db
    .selectFrom('conversations')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .where('message_count', '>', 0)
    .select((eb) => [
      eb.fn.countAll().as('total'),
      eb.fn
        .sum(eb.case().when(eb.and([eb('status', '=', 'ACTIVE'), eb('updated_at', '>=', cutoff)])).then(1).else(0).end())
        .as('active'),
      eb.fn.sum(eb.case().when('last_message_role', '=', 'USER').then(1).else(0).end()).as('unanswered'),
      eb.fn.count('end_user_id').as('identified'),
      eb.fn.count('end_user_id').distinct().as('endUsers'),
    ])
    .executeTakeFirstOrThrow();

  const msg = await db
    .selectFrom('messages')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .select((eb) => [
      eb.fn.countAll().as('total'),
      eb.fn.sum(eb.case().when('role', '=', 'user').then(1).else(0).end()).as('user'),
      eb.fn.sum(eb.case().when('role', '=', 'assistant').then(1).else(0).end()).as('assistant'),
      eb.fn
        .sum(eb.case().when(eb.and([eb('role', '=', 'assistant'), eb('status', '=', 'error')])).then(1).else(0).end())
        .as('failed'),
    ])
    .executeTakeFirstOrThrow();

  const convByDay = await db
    .selectFrom('conversations')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .where('message_count', '>', 0)
    .select((eb) => [day('created_at').as('d'), eb.fn.countAll().as('n')])
    .groupBy(day('created_at'))
    .execute();
  const msgByDay = await db
    .selectFrom('messages')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .select((eb) => [day('created_at').as('d'), eb.fn.countAll().as('n')])
    .groupBy(day('created_at'))
    .execute();
  const fbByDay = await db
    .selectFrom('feedback')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .select((eb) => [day('created_at').as('d'), 'rating', eb.fn.countAll().as('n')])
    .groupBy([day('created_at'), 'rating'])
    .execute();

  const byDay = new Map<string, Analytics['byDay'][number]>();
  for (let i = 0; i < days; i++) {
    const date = new Date(todayStart - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    byDay.set(date, { date, conversations: 0, messages: 0, positive: 0, negative: 0 });
  }
  for (const r of convByDay) if (byDay.has(r.d)) byDay.get(r.d)!.conversations = n(r.n);
  for (const r of msgByDay) if (byDay.has(r.d)) byDay.get(r.d)!.messages = n(r.n);
  for (const r of fbByDay) {
    const entry = byDay.get(r.d);
    if (entry) entry[r.rating === 'POSITIVE' ? 'positive' : 'negative'] += n(r.n);
  }
  const positive = [...byDay.values()].reduce((s, d) => s + d.positive, 0);
  const negative = [...byDay.values()].reduce((s, d) => s + d.negative, 0);

  const total = n(conv.total);
  const unanswered = n(conv.unanswered);
  const active = n(conv.active);
  const assistant = n(msg.assistant);
  const failed = n(msg.failed);
  return {
    from,
    to: new Date(at).toISOString(),
    conversations: {
      total,
      active,
      closed: total - active,
      unanswered,
      identified: n(conv.identified),
      endUsers: n(conv.endUsers),
    },
    messages: { total: n(msg.total), user: n(msg.user), assistant, failed },
    feedback: { positive, negative },
    rates: {
      answered: ratio(total - unanswered, total),
      satisfaction: ratio(positive, positive + negative),
      answerFailure: ratio(failed, assistant),
    },
    byDay: [...byDay.values()],
  };
}
