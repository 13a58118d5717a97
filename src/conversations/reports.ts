import { sql, type Kysely } from 'kysely';
import type { Project } from '../projects/project.js';
import type { Database } from '../store/index.js';
import { groupQuestions, leadOf, termsOfEach } from './question-groups.js';
import { idleCutoff, statusCondition } from './status.js';

type Db = Kysely<Database>;

export interface ActivityRow {
  id: string;
  conversation_id: string;
  role: 'user' | 'assistant';
  status: 'complete' | 'streaming' | 'error';
  content: string;
  created_at: string;
  end_user_external_id: string | null;
  author_type: 'agent' | 'human' | null;
  author_id: string | null;
  author_name: string | null;
}

/**
 * The project's messages created after `since` (all, without it) and at or before `until`: the
 * newest `limit` of them, oldest first; `truncated` when there were more.
 */
export async function messagesBetween(
  db: Db,
  projectId: string,
  window: { since: string | null; until: string },
  limit: number,
): Promise<{ rows: ActivityRow[]; truncated: boolean }> {
  let q = db
    .selectFrom('messages as m')
    .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
    .leftJoin('end_users as u', 'u.id', 'c.end_user_id')
    .select(['m.id', 'm.conversation_id', 'm.role', 'm.status', 'm.content', 'm.created_at', 'm.author_type', 'm.author_id', 'm.author_name'])
    .select('u.external_id as end_user_external_id')
    .where('m.project_id', '=', projectId)
    .where('m.created_at', '<=', window.until);
  if (window.since) q = q.where('m.created_at', '>', window.since);
  const rows = await q.orderBy('m.created_at', 'desc').orderBy('m.id', 'desc').limit(limit + 1).execute();
  return { rows: rows.slice(0, limit).reverse(), truncated: rows.length > limit };
}

/** A count per UTC day (`YYYY-MM-DD`). */
export type DayCounts = Array<{ date: string; n: number }>;

export interface ProjectCounts {
  /** Conversations started in the window that have a message; `active` by the status rule at `at`. */
  conversations: { total: number; active: number; unanswered: number; identified: number; endUsers: number };
  /** `assistant` counts every assistant message; `human` those of them a person wrote. */
  messages: { total: number; user: number; assistant: number; human: number; failed: number };
  /** Assistant messages by stored outcome (answers stored before outcomes were recorded have none). */
  outcomes: { answered: number; declined: number; action: number; error: number };
  byDay: {
    conversations: DayCounts;
    messages: DayCounts;
    feedback: Array<{ date: string; rating: 'POSITIVE' | 'NEGATIVE'; n: number }>;
  };
  /** Visitors' messages per UTC hour of the day (0..23); hours without any are absent. */
  byHour: Array<{ hour: number; n: number }>;
}

const day = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, 10)`;
/** The `HH` of an ISO 8601 UTC time string (`YYYY-MM-DDTHH:…`), the same text on both databases. */
const hour = (column: string) => sql<string>`substr(${sql.ref(column)}, 12, 2)`;
const n = (v: unknown) => Number(v ?? 0);

/**
 * Counts of a project's conversations, messages and ratings created since `from`, with aggregate
 * queries on both databases.
 */
export async function projectCounts(db: Db, project: Project, from: string, at = Date.now()): Promise<ProjectCounts> {
  const conv = await db
    .selectFrom('conversations')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .where('message_count', '>', 0)
    .select((eb) => [
      eb.fn.countAll().as('total'),
      eb.fn.sum(eb.case().when(statusCondition('ACTIVE', idleCutoff(project, at))).then(1).else(0).end()).as('active'),
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
      eb.fn.sum(eb.case().when(eb.and([eb('role', '=', 'assistant'), eb('author_type', '=', 'human')])).then(1).else(0).end()).as('human'),
      eb.fn
        .sum(eb.case().when(eb.and([eb('role', '=', 'assistant'), eb('status', '=', 'error')])).then(1).else(0).end())
        .as('failed'),
    ])
    .executeTakeFirstOrThrow();

  const outcomeRows = await db
    .selectFrom('messages')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .where('role', '=', 'assistant')
    .where('outcome', 'is not', null)
    .select((eb) => ['outcome', eb.fn.countAll().as('n')])
    .groupBy('outcome')
    .execute();
  const outcomes = { answered: 0, declined: 0, action: 0, error: 0 };
  for (const r of outcomeRows) if (r.outcome) outcomes[r.outcome] = n(r.n);

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

  const msgByHour = await db
    .selectFrom('messages')
    .where('project_id', '=', project.id)
    .where('created_at', '>=', from)
    .where('role', '=', 'user')
    .select((eb) => [hour('created_at').as('h'), eb.fn.countAll().as('n')])
    .groupBy(hour('created_at'))
    .execute();

  return {
    conversations: {
      total: n(conv.total),
      active: n(conv.active),
      unanswered: n(conv.unanswered),
      identified: n(conv.identified),
      endUsers: n(conv.endUsers),
    },
    messages: { total: n(msg.total), user: n(msg.user), assistant: n(msg.assistant), human: n(msg.human), failed: n(msg.failed) },
    outcomes,
    byDay: {
      conversations: convByDay.map((r) => ({ date: r.d, n: n(r.n) })),
      messages: msgByDay.map((r) => ({ date: r.d, n: n(r.n) })),
      feedback: fbByDay.map((r) => ({ date: r.d, rating: r.rating, n: n(r.n) })),
    },
    byHour: msgByHour.map((r) => ({ hour: Number(r.h), n: n(r.n) })),
  };
}

/** Messages looked at for the top questions: the newest ones in the window. Bounds the work of one read. */
const MAX_TOP_QUESTION_MESSAGES = 5000;

export interface TopQuestion {
  /** The group's first question, as asked. */
  question: string;
  count: number;
  lastAskedAt: string;
}

/**
 * What users asked most since `from`: their messages grouped the way knowledge gaps are (see
 * question-groups.ts; `termsOf` gives a message's key terms, `asWritten` its terms as written),
 * most frequent first, each as its first message spelt right (leadOf). Messages without a key
 * term ("thanks!") are left out.
 */
export async function topQuestions(
  db: Db,
  projectId: string,
  from: string,
  termsOf: (text: string) => string[],
  asWritten: (text: string) => string[],
  limit = 10,
): Promise<TopQuestion[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['content', 'created_at'])
    .where('project_id', '=', projectId)
    .where('role', '=', 'user')
    .where('created_at', '>=', from)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_TOP_QUESTION_MESSAGES)
    .execute();
  rows.reverse();
  const last = (g: { members: typeof rows }) => g.members.at(-1)!.created_at;
  // The lead is read for the groups shown only.
  return groupQuestions(rows, (r) => r.content, await termsOfEach(rows.map((r) => r.content), termsOf))
    .sort((a, b) => b.members.length - a.members.length || (last(a) < last(b) ? 1 : -1))
    .slice(0, limit)
    .map((g) => ({ question: g.members[leadOf(g, g.members.map((r) => new Set(asWritten(r.content))))]!.content, count: g.members.length, lastAskedAt: last(g) }));
}
