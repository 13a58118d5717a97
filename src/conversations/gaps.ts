import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { Conflict, NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { clipText } from '../lib/nul.js';
import type { Database } from '../store/index.js';
import type { KnowledgeGapsTable } from '../store/schema.js';
import { GROUP_SIMILARITY, groupQuestions, jaccard, leadOf, termsOfEach } from './question-groups.js';

type Db = Kysely<Database>;
export type GapRow = Selectable<KnowledgeGapsTable>;

/** Answers looked at per report: the newest ones in the window. Bounds the work of one read. */
const MAX_ANSWERS = 5000;
/** Examples shown per gap, newest first. */
const MAX_EXAMPLES = 5;

/** A question whose answer did not help: declined, or rated down. */
export interface UnansweredQuestion {
  conversationId: string;
  /** The user's message. */
  messageId: string;
  text: string;
  askedAt: string;
  declined: boolean;
  negativeFeedback: boolean;
}

/**
 * The project's questions since `since` whose answer was declined (outcome) or rated NEGATIVE,
 * oldest first: each is the user message right before such an answer. A regenerated answer counts
 * as well: the question was not answered that time.
 */
export async function unansweredQuestions(db: Db, projectId: string, since: string): Promise<UnansweredQuestion[]> {
  const rows = await db
    .selectFrom('messages as a')
    .where('a.project_id', '=', projectId)
    .where('a.role', '=', 'assistant')
    .where('a.created_at', '>=', since)
    .where((eb) =>
      eb.or([
        eb('a.outcome', '=', 'declined'),
        eb.exists(eb.selectFrom('feedback as f').select('f.id').whereRef('f.message_id', '=', 'a.id').where('f.rating', '=', 'NEGATIVE')),
      ]),
    )
    .select((eb) => {
      const asked = () =>
        eb
          .selectFrom('messages as u')
          .whereRef('u.conversation_id', '=', 'a.conversation_id')
          .where('u.role', '=', 'user')
          .whereRef('u.seq', '<', 'a.seq')
          .orderBy('u.seq', 'desc')
          .limit(1);
      return [
        'a.id',
        'a.conversation_id',
        'a.outcome',
        'a.created_at',
        eb
          .selectFrom('feedback as f')
          .select((f) => f.fn.countAll().as('n'))
          .whereRef('f.message_id', '=', 'a.id')
          .where('f.rating', '=', 'NEGATIVE')
          .as('negative'),
        asked().select('u.id').as('question_id'),
        asked().select('u.content').as('question'),
        asked().select('u.created_at').as('asked_at'),
      ];
    })
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(MAX_ANSWERS)
    .execute();
  return rows
    .reverse()
    .filter((r) => r.question_id !== null && r.question !== null)
    .map((r) => ({
      conversationId: r.conversation_id,
      messageId: r.question_id!,
      text: r.question!,
      askedAt: r.asked_at ?? r.created_at,
      declined: r.outcome === 'declined',
      negativeFeedback: Number(r.negative ?? 0) > 0,
    }));
}

/** A gap as the report shows it. */
export interface GapReport {
  id: string;
  question: string;
  count: number;
  lastAskedAt: string;
  examples: Array<{ conversationId: string; messageId: string; text: string }>;
  reasons: { declined: number; negativeFeedback: number };
}

const termsOfRow = (row: GapRow) => new Set(JSON.parse(row.terms) as string[]);

/**
 * The open knowledge gaps of a project since `since`: its unanswered questions grouped by meaning
 * (see question-groups.ts, with `termsOf` giving a question's key terms), most frequent first. Each
 * group is matched to a stored gap by the same similarity, or stored as a new one, so a gap keeps
 * its id from one read to the next. A dismissed gap stays hidden; a resolved one comes back only
 * when its question goes unanswered again after it was resolved. `asWritten` gives a question's
 * terms as written, when `termsOf` reads them otherwise (misspellings respelled): a gap stored from
 * those terms still matches its questions by them, and a new gap's question is its first one spelt
 * right (leadOf), which a resolution makes the FAQ item's question.
 */
export async function knowledgeGaps(
  db: Db,
  projectId: string,
  since: string,
  termsOf: (text: string) => string[],
  asWritten: (text: string) => string[],
): Promise<GapReport[]> {
  const questions = await unansweredQuestions(db, projectId, since);
  const groups = groupQuestions(questions, (q) => q.text, await termsOfEach(questions.map((q) => q.text), termsOf));
  const rows = await db.selectFrom('knowledge_gaps').selectAll().where('project_id', '=', projectId).execute();
  const known = rows.map((row) => ({ row, terms: termsOfRow(row) }));

  const byGap = new Map<string, { row: GapRow; members: UnansweredQuestion[] }>();
  for (const group of groups) {
    const written = group.members.map((m) => new Set(asWritten(m.text)));
    let match: GapRow | null = null;
    let best = 0;
    for (const k of known) {
      const score = Math.max(...[...group.terms, ...written].map((t) => jaccard(t, k.terms)));
      if (score >= GROUP_SIMILARITY && score > best) {
        match = k.row;
        best = score;
      }
    }
    if (!match) {
      const lead = leadOf(group, written);
      match = await ensureGap(db, projectId, group.members[lead]!.text, [...group.terms[lead]!]);
      known.push({ row: match, terms: termsOfRow(match) });
    }
    const entry = byGap.get(match.id) ?? { row: match, members: [] };
    entry.members.push(...group.members);
    byGap.set(match.id, entry);
  }

  const report: GapReport[] = [];
  for (const { row, members } of byGap.values()) {
    if (row.status === 'dismissed') continue;
    // A gap that was resolved counts only what went unanswered since, also once it is open again
    // (which keeps `closed_at`): the occurrences before were answered by its resolution.
    const open = row.closed_at ? members.filter((m) => m.askedAt > row.closed_at!) : members;
    if (open.length === 0) continue;
    // Asked again after it was answered: the answer did not help, so the gap is open again.
    if (row.status === 'resolved') await db.updateTable('knowledge_gaps').set({ status: 'open', updated_at: now() }).where('id', '=', row.id).execute();
    const newest = [...open].sort((a, b) => (a.askedAt < b.askedAt ? 1 : -1));
    report.push({
      id: row.id,
      question: row.question,
      count: open.length,
      lastAskedAt: newest[0]!.askedAt,
      examples: newest.slice(0, MAX_EXAMPLES).map((m) => ({ conversationId: m.conversationId, messageId: m.messageId, text: m.text })),
      reasons: { declined: open.filter((m) => m.declined).length, negativeFeedback: open.filter((m) => m.negativeFeedback).length },
    });
  }
  return report.sort((a, b) => b.count - a.count || (a.lastAskedAt < b.lastAskedAt ? 1 : -1));
}

/** The stored gap for a question, created if none has its signature yet (two readers at once make one). */
async function ensureGap(db: Db, projectId: string, question: string, terms: string[]): Promise<GapRow> {
  const sorted = [...terms].sort();
  const signature = sorted.join(' ');
  const at = now();
  await db
    .insertInto('knowledge_gaps')
    .values({
      id: newId('gap'),
      project_id: projectId,
      question: clipText(question, 2000),
      terms: JSON.stringify(sorted),
      signature,
      status: 'open',
      answer: null,
      faq_source_id: null,
      closed_at: null,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['project_id', 'signature']).doNothing())
    .execute();
  return db.selectFrom('knowledge_gaps').selectAll().where('project_id', '=', projectId).where('signature', '=', signature).executeTakeFirstOrThrow();
}

/** A gap of the project, or 404. */
export async function getGap(db: Db, projectId: string, gapId: string): Promise<GapRow> {
  const row = await db.selectFrom('knowledge_gaps').selectAll().where('id', '=', gapId).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Gap not found');
  return row;
}

/**
 * How long a claim may take to add its answer: a gap resolved with no FAQ source for longer was
 * claimed by a resolve that died on the way (a crash, the database gone meanwhile), and may be
 * claimed again rather than answer 409 forever.
 */
const CLAIM_TIMEOUT_MS = 2 * 60_000;

/** A gap taken for resolving: the gap as it was, and the claim's time, which marks the claim as its own. */
export interface GapClaim {
  before: GapRow;
  at: string;
}

/**
 * Takes a gap for resolving with `answer`: marks it resolved unless it is already (404 for an unknown
 * gap, 409 for a resolved one), in one statement, so of two resolves at once exactly one wins. The
 * FAQ source it went to is set after (gapAnswered), or the gap put back (releaseGap).
 */
export async function claimGap(db: Db, projectId: string, gapId: string, answer: string): Promise<GapClaim> {
  const before = await getGap(db, projectId, gapId);
  const at = now();
  const stale = new Date(Date.parse(at) - CLAIM_TIMEOUT_MS).toISOString();
  const res = await db
    .updateTable('knowledge_gaps')
    .set({ status: 'resolved', answer, faq_source_id: null, closed_at: at, updated_at: at })
    .where('id', '=', gapId)
    .where('project_id', '=', projectId)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'open'),
        // Dismissed, unless while another resolve held it (dismissGap): that resolve still finishes.
        eb.and([eb('status', '=', 'dismissed'), eb.not(eb.and([eb('faq_source_id', 'is', null), eb('updated_at', '<', eb.ref('closed_at')), eb('updated_at', '>=', stale)]))]),
        eb.and([eb('status', '=', 'resolved'), eb('faq_source_id', 'is', null), eb('updated_at', '<', stale)]),
      ]),
    )
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) {
    // Gone with its project since it was read (404); else resolved already, or by another resolve.
    await getGap(db, projectId, gapId);
    throw Conflict('Gap already resolved');
  }
  return { before, at };
}

/**
 * Records the FAQ source a claimed gap's answer went to; 409 when the claim was taken over meanwhile
 * (it ran past CLAIM_TIMEOUT_MS), so that the gap keeps the answer of the claim that holds it; 404
 * when the gap was deleted (with its project) meanwhile.
 */
export async function gapAnswered(db: Db, claim: GapClaim, faqSourceId: string): Promise<GapRow> {
  const res = await db
    .updateTable('knowledge_gaps')
    .set({ faq_source_id: faqSourceId })
    .where('id', '=', claim.before.id)
    .where('updated_at', '=', claim.at)
    .where('faq_source_id', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) {
    // Gone with its project meanwhile (404), or taken over.
    await getGap(db, claim.before.project_id, claim.before.id);
    throw Conflict('Gap already resolved');
  }
  return getGap(db, claim.before.project_id, claim.before.id);
}

/** Puts back a claimed gap whose answer could not be stored, as it was before the claim (unless taken over since). */
export async function releaseGap(db: Db, claim: GapClaim): Promise<void> {
  const { before } = claim;
  await db
    .updateTable('knowledge_gaps')
    .set({ status: before.status, answer: before.answer, faq_source_id: before.faq_source_id, closed_at: before.closed_at, updated_at: before.updated_at })
    .where('id', '=', before.id)
    .where('updated_at', '=', claim.at)
    .where('faq_source_id', 'is', null)
    // Dismissed meanwhile: it stays dismissed.
    .where('status', '=', 'resolved')
    .execute();
}

/**
 * The gaps resolved into a source that is being deleted (the answers FAQ) are unanswered again:
 * open, with every time they were asked, and their answer kept for whoever answers them next. A
 * dismissed one stays dismissed, without the source.
 */
export async function reopenGapsAnsweredBy(db: Db | Transaction<Database>, projectId: string, sourceId: string): Promise<void> {
  await db
    .updateTable('knowledge_gaps')
    .set({ status: 'open', faq_source_id: null, closed_at: null, updated_at: now() })
    .where('project_id', '=', projectId)
    .where('faq_source_id', '=', sourceId)
    .where('status', '=', 'resolved')
    .execute();
  await db.updateTable('knowledge_gaps').set({ faq_source_id: null }).where('project_id', '=', projectId).where('faq_source_id', '=', sourceId).execute();
}

/**
 * Hides a gap for good: its question is not one the help content should answer. Repeating it changes
 * nothing. A gap that a resolve has claimed but not yet answered (resolved, no FAQ source) keeps the
 * claim's time, which marks the claim as the resolve's own: the resolve still records its answer, as
 * if the dismissal came just after it, rather than answer 409 with its answer already in the FAQ.
 */
export async function dismissGap(db: Db, projectId: string, gapId: string): Promise<GapRow> {
  await getGap(db, projectId, gapId);
  const at = now();
  await db
    .updateTable('knowledge_gaps')
    .set({ status: 'dismissed', closed_at: at, updated_at: sql<string>`case when status = 'resolved' and faq_source_id is null then updated_at else ${at} end` })
    .where('id', '=', gapId)
    .where('status', '!=', 'dismissed')
    .execute();
  return getGap(db, projectId, gapId);
}
