import { sql, type Kysely, type Transaction } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { now } from '../lib/ids.js';
import { clipText, storable } from '../lib/nul.js';
import type { Project } from '../projects/project.js';
import { retryDeadlock, type Database } from '../store/index.js';
import { enqueueEvent } from '../webhooks/events.js';
import type { ConversationsTable } from '../store/schema.js';
import { authorOf, type MessageAuthor } from './messages.js';
import { effectiveStatus, type ConversationStatus } from './status.js';

type Db = Kysely<Database>;
type Tx = Kysely<Database> | Transaction<Database>;

/** Messages of the transcript a `conversation.handoff_requested` webhook carries (the latest ones). */
const TRANSCRIPT_MESSAGES = 50;
/** Characters of each message in that transcript. */
const TRANSCRIPT_TEXT = 2000;

/** A person the conversation is handed to. `id` is null when the caller named a person without an account. */
export interface Assignee {
  id: string | null;
  name: string;
}

/** How a handoff came about. */
export type HandoffVia = 'user' | 'agent' | 'policy' | 'teammate';

/** A conversation's handoff: none, waiting for a person, or with a person. */
export type HandoffState =
  | null
  | { status: 'requested'; requestedAt: string; reason: string | null; via: HandoffVia | null }
  | { status: 'active'; assignee: Assignee; acceptedAt: string; requestedAt: string | null; reason: string | null; via: HandoffVia | null };

type HandoffColumns = Pick<
  ConversationsTable,
  | 'handoff_status'
  | 'handoff_reason'
  | 'handoff_via'
  | 'handoff_requested_at'
  | 'handoff_assignee_id'
  | 'handoff_assignee_name'
  | 'handoff_accepted_at'
>;

/** The handoff state a stored conversation is in. */
export function handoffState(row: HandoffColumns): HandoffState {
  const via = (row.handoff_via as HandoffVia | null) ?? null;
  if (row.handoff_status === 'requested') {
    return { status: 'requested', requestedAt: row.handoff_requested_at ?? '', reason: row.handoff_reason, via };
  }
  if (row.handoff_status === 'active') {
    return {
      status: 'active',
      assignee: { id: row.handoff_assignee_id, name: row.handoff_assignee_name ?? '' },
      acceptedAt: row.handoff_accepted_at ?? '',
      requestedAt: row.handoff_requested_at,
      reason: row.handoff_reason,
      via,
    };
  }
  return null;
}

/** The handoff columns of a conversation without a handoff. */
export const NO_HANDOFF = {
  handoff_status: null,
  handoff_reason: null,
  handoff_via: null,
  handoff_requested_at: null,
  handoff_assignee_id: null,
  handoff_assignee_name: null,
  handoff_accepted_at: null,
} as const;

/**
 * The handoff of a conversation as it stands now: none once the conversation is closed, explicitly
 * (which clears it) or by idling past the project's TTL (computed on read, as the status is).
 */
export function currentHandoff(
  row: HandoffColumns & { status: ConversationStatus; updated_at: string },
  project: Project,
  at = Date.now(),
): HandoffState {
  return effectiveStatus(row, project, at) === 'CLOSED' ? null : handoffState(row);
}

/** Project defaults for handoff when `settings.handoff` says nothing. */
export function handoffPolicy(project: Project) {
  const h = project.settings.handoff ?? {};
  return {
    enabled: h.enabled ?? true,
    afterDeclined: h.afterDeclined ?? null,
    onNegativeFeedback: h.onNegativeFeedback ?? false,
    officeHoursText: h.officeHoursText ?? null,
  };
}

/** Longest reason stored with a request. */
export const MAX_REASON_LENGTH = 500;

export interface HandoffChange {
  state: HandoffState;
  /** False when the conversation already was in (or past) the asked-for state: nothing was written. */
  changed: boolean;
}

async function readState(db: Tx, conversationId: string): Promise<HandoffState> {
  const row = await db
    .selectFrom('conversations')
    .select(['handoff_status', 'handoff_reason', 'handoff_via', 'handoff_requested_at', 'handoff_assignee_id', 'handoff_assignee_name', 'handoff_accepted_at'])
    .where('id', '=', conversationId)
    .executeTakeFirst();
  // Deleted (with its project) since the caller found it.
  if (!row) throw NotFound('Conversation not found');
  return handoffState(row);
}

/** The conversation's handoff state now. */
export async function getHandoff(db: Db, conversationId: string): Promise<HandoffState> {
  return readState(db, conversationId);
}

/**
 * Asks for a person. Only a conversation without a handoff changes (one conditional write, so two
 * requests racing leave one); one that is already waiting or with a person stays as it is, which
 * makes pressing the button twice, or the agent and the policy both asking, harmless.
 */
export async function requestHandoff(
  db: Db,
  conversation: { id: string },
  input: { reason?: string | null; via: HandoffVia },
): Promise<HandoffChange> {
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('conversations')
        .set({
          handoff_status: 'requested',
          // A reason may come from a model's tool call: made storable like any text a model writes.
          handoff_reason: (input.reason && clipText(storable(input.reason), MAX_REASON_LENGTH)) || null,
          handoff_via: input.via,
          handoff_requested_at: now(),
          handoff_assignee_id: null,
          handoff_assignee_name: null,
          handoff_accepted_at: null,
        })
        .where('id', '=', conversation.id)
        .where('handoff_status', 'is', null)
        .executeTakeFirst();
      const state = await readState(trx, conversation.id);
      const changed = Number(res.numUpdatedRows) > 0;
      if (changed && state) {
        const projectId = await projectOf(trx, conversation.id);
        const transcript = await transcriptOf(trx, conversation.id);
        await enqueueEvent(trx, projectId, 'conversation.handoff_requested', {
          conversation: { id: conversation.id, projectId },
          handoff: state,
          summary: summarize(state.reason, transcript),
          transcript,
        });
      }
      return { state, changed };
    }),
  );
}

async function projectOf(db: Tx, conversationId: string): Promise<string> {
  const row = await db.selectFrom('conversations').select('project_id').where('id', '=', conversationId).executeTakeFirstOrThrow();
  return row.project_id;
}

interface TranscriptEntry {
  role: 'user' | 'assistant';
  author: MessageAuthor | null;
  content: string;
  createdAt: string;
}

/** The conversation's latest messages, oldest first, each cut to a bounded length. */
async function transcriptOf(db: Tx, conversationId: string): Promise<TranscriptEntry[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['role', 'content', 'author_type', 'author_id', 'author_name', 'created_at'])
    .where('conversation_id', '=', conversationId)
    .where('superseded_by', 'is', null)
    .orderBy('seq', 'desc')
    .limit(TRANSCRIPT_MESSAGES)
    .execute();
  return rows.reverse().map((r) => ({
    role: r.role,
    author: r.role === 'user' ? null : authorOf(r),
    content: r.content.length > TRANSCRIPT_TEXT ? `${clipText(r.content, TRANSCRIPT_TEXT)}…` : r.content,
    createdAt: r.created_at,
  }));
}

/**
 * What the user needs, in a line a person can read before opening the conversation: the reason given
 * for the handoff and the user's last message, in their own words (nothing is made up).
 */
export function summarize(reason: string | null, transcript: readonly TranscriptEntry[]): string {
  const last = [...transcript].reverse().find((m) => m.role === 'user')?.content.replace(/\s+/g, ' ').trim();
  const quoted = last ? `Last message from the user: "${last.length > 200 ? `${clipText(last, 200)}…` : last}"` : 'The user has not written anything yet.';
  const why = reason?.replace(/\s+/g, ' ').trim();
  return why && why !== last ? `${why.replace(/[.!?]?$/, '.')} ${quoted}` : quoted;
}

/**
 * A person takes the conversation (from a request, or taking over on their own): it becomes active
 * with them as assignee. Taking over from another person reassigns it; the same person again
 * changes nothing.
 */
export async function assignHandoff(db: Db, conversation: { id: string }, assignee: Assignee): Promise<HandoffChange> {
  const before = await readState(db, conversation.id);
  if (before?.status === 'active' && before.assignee.id === assignee.id && before.assignee.name === assignee.name) {
    return { state: before, changed: false };
  }
  const at = now();
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      await trx
        .updateTable('conversations')
        .set({
          handoff_status: 'active',
          handoff_assignee_id: assignee.id,
          handoff_assignee_name: assignee.name,
          handoff_accepted_at: at,
          handoff_requested_at: before?.requestedAt ?? at,
          handoff_via: before?.via ?? 'teammate',
          handoff_reason: before?.reason ?? null,
        })
        .where('id', '=', conversation.id)
        .execute();
      const state = await readState(trx, conversation.id);
      const projectId = await projectOf(trx, conversation.id);
      await enqueueEvent(trx, projectId, 'conversation.handoff_accepted', {
        conversation: { id: conversation.id, projectId },
        handoff: state,
        ...(before?.status === 'active' ? { previousAssignee: before.assignee } : {}),
      });
      return { state, changed: true };
    }),
  );
}

/**
 * Returns the conversation to the agent: no handoff, and the declined-answers count starts again,
 * so the policy does not hand it straight back on the next answer (a handoff loop).
 */
export async function handBack(db: Db, conversation: { id: string }): Promise<HandoffChange> {
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const before = await readState(trx, conversation.id);
      const res = await trx
        .updateTable('conversations')
        .set({ ...NO_HANDOFF, declined_streak: 0 })
        .where('id', '=', conversation.id)
        .where('handoff_status', 'is not', null)
        .executeTakeFirst();
      const changed = Number(res.numUpdatedRows) > 0;
      if (changed) {
        const projectId = await projectOf(trx, conversation.id);
        await enqueueEvent(trx, projectId, 'conversation.handed_back', {
          conversation: { id: conversation.id, projectId },
          previous: before,
        });
      }
      return { state: null, changed };
    }),
  );
}

/**
 * Counts the agent's answers that declined in a row while no person has the conversation: one more
 * for a declined answer, back to 0 for any other. Returns the new count, or null when the
 * conversation has a handoff (requested or active), which it leaves as it is. One atomic
 * update-and-return on both databases: it runs after every answer.
 */
export async function recordAnswerDeclined(db: Db, conversationId: string, declined: boolean): Promise<number | null> {
  // SQL text, as the send's other statements: the query builder cost more than the statement.
  const { rows } = await sql<{ declined_streak: number }>`
    update conversations set declined_streak = ${declined ? sql`declined_streak + 1` : sql`0`}
    where id = ${conversationId} and handoff_status is null
    returning declined_streak`.execute(db);
  return rows[0] ? Number(rows[0].declined_streak) : null;
}
