import type { Kysely } from 'kysely';
import { authorOf, PREVIEW_LENGTH } from '../../conversations/messages.js';
import { messagesBetween, projectCounts, topQuestions } from '../../conversations/reports.js';
import { packCursor, unpackCursor } from '../../lib/cursor.js';
import { BadRequest } from '../../lib/errors.js';
import { clipText } from '../../lib/nul.js';
import type { Project } from '../../projects/project.js';
import type { Database } from '../../store/index.js';
import { questionTerms } from '../gaps/service.js';
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
  return packCursor({ t: horizon });
}

function decodeActivityCursor(raw: string): string {
  const t = (unpackCursor(raw) as { t?: unknown } | undefined)?.t;
  if (typeof t === 'string' && !Number.isNaN(Date.parse(t))) return new Date(t).toISOString();
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
  const { rows, truncated } = await messagesBetween(db, projectId, { since, until: horizon }, page.limit);
  const messages = rows.map((r) => ({
    id: r.id,
    conversationId: r.conversation_id,
    role: r.role,
    status: r.status,
    preview: clipText(r.content, PREVIEW_LENGTH),
    createdAt: r.created_at,
    endUserExternalId: r.end_user_external_id,
    ...(r.role === 'assistant' ? { author: authorOf(r) } : {}),
  }));
  return { messages, nextCursor: encodeActivityCursor(horizon), truncated };
}

const DAY_MS = 86_400_000;
const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/**
 * Counts over the last `days` UTC days (today included), computed with aggregate queries on both
 * databases. Conversation figures cover conversations started in the window that have a message;
 * `active` and `closed` follow the status rule at `at`.
 */
export async function projectAnalytics(db: Db, project: Project, days: number, termsOf: (text: string) => string[], at = Date.now()): Promise<Analytics> {
  const todayStart = Math.floor(at / DAY_MS) * DAY_MS;
  const from = new Date(todayStart - (days - 1) * DAY_MS).toISOString();
  const counts = await projectCounts(db, project, from, at);

  const byDay = new Map<string, Analytics['byDay'][number]>();
  for (let i = 0; i < days; i++) {
    const date = new Date(todayStart - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    byDay.set(date, { date, conversations: 0, messages: 0, positive: 0, negative: 0 });
  }
  for (const r of counts.byDay.conversations) if (byDay.has(r.date)) byDay.get(r.date)!.conversations = r.n;
  for (const r of counts.byDay.messages) if (byDay.has(r.date)) byDay.get(r.date)!.messages = r.n;
  for (const r of counts.byDay.feedback) {
    const entry = byDay.get(r.date);
    if (entry) entry[r.rating === 'POSITIVE' ? 'positive' : 'negative'] += r.n;
  }
  const positive = [...byDay.values()].reduce((s, d) => s + d.positive, 0);
  const negative = [...byDay.values()].reduce((s, d) => s + d.negative, 0);

  const { total, unanswered, active, identified, endUsers } = counts.conversations;
  const { assistant, human, failed } = counts.messages;
  const o = counts.outcomes;
  const withOutcome = o.answered + o.declined + o.action + o.error;
  return {
    from,
    to: new Date(at).toISOString(),
    conversations: {
      total,
      active,
      closed: total - active,
      unanswered,
      identified,
      endUsers,
    },
    messages: counts.messages,
    feedback: { positive, negative },
    outcomes: { ...o, answeredRate: ratio(o.answered + o.action, withOutcome), declinedRate: ratio(o.declined, withOutcome) },
    rates: {
      answered: ratio(total - unanswered, total),
      satisfaction: ratio(positive, positive + negative),
      // Of the agent's answers: a person's reply is not one.
      answerFailure: ratio(failed, assistant - human),
    },
    byDay: [...byDay.values()],
    byHour: Array.from({ length: 24 }, (_, h) => ({ hour: h, messages: counts.byHour.find((r) => r.hour === h)?.n ?? 0 })),
    topQuestions: await topQuestions(db, project.id, from, termsOf, questionTerms),
  };
}
