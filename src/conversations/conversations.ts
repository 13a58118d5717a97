import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import type { Project } from '../projects/project.js';
import { projectGone, retryDeadlock, type Database } from '../store/index.js';
import { keysetPage, readCursor } from '../store/keyset.js';
import type { ConversationsTable } from '../store/schema.js';
import { enqueueEvent } from '../webhooks/events.js';
import { handoffState, NO_HANDOFF } from './handoff.js';
import { findEndUser, upsertEndUser } from './end-users.js';
import { idleCutoff, statusCondition, type ConversationStatus } from './status.js';

type Db = Kysely<Database>;
export type ConversationRow = Selectable<ConversationsTable>;

/** A conversation with the end user it is with, if any. */
export type ConversationWithEndUser = ConversationRow & {
  end_user_external_id: string | null;
  end_user_email: string | null;
  end_user_name: string | null;
  end_user_verified_at: string | null;
};

/**
 * Creates a conversation (and its end user when new). The row and its `conversation.created` event
 * are written in one transaction. 404 when the project was deleted since it was read.
 */
export async function createConversation(db: Db, projectId: string, endUserExternalId?: string): Promise<ConversationRow> {
  return insertConversation(db, projectId, endUserExternalId).catch((err: unknown) => {
    // The project was deleted since its key was read.
    throw projectGone(err);
  });
}

async function insertConversation(db: Db, projectId: string, endUserExternalId?: string): Promise<ConversationRow> {
  const at = now();
  const endUser = endUserExternalId ? await upsertEndUser(db, projectId, endUserExternalId) : null;
  const row: ConversationRow = {
    id: newId('conv'),
    project_id: projectId,
    end_user_id: endUser?.id ?? null,
    status: 'ACTIVE',
    message_count: 0,
    last_message_preview: null,
    last_message_role: null,
    closed_at: null,
    created_at: at,
    updated_at: at,
    ...NO_HANDOFF,
    declined_streak: 0,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('conversations').values(row).execute();
    await enqueueEvent(trx, projectId, 'conversation.created', {
      conversation: { id: row.id, projectId, endUserId: endUserExternalId ?? null, status: row.status, createdAt: at },
    });
  });
  return row;
}

function withEndUser(db: Db, projectId: string) {
  return db
    .selectFrom('conversations as c')
    .leftJoin('end_users as u', 'u.id', 'c.end_user_id')
    .selectAll('c')
    .select([
      'u.external_id as end_user_external_id',
      'u.email as end_user_email',
      'u.name as end_user_name',
      'u.verified_at as end_user_verified_at',
    ])
    .where('c.project_id', '=', projectId);
}

/**
 * The conversation of this project, or undefined (another project's counts as unknown). The first
 * statement of every send, so SQL text like the send's other statements: built and compiled with the
 * query builder it cost several times what it costs to run, in a server process (measured in
 * docs/agent.md, fifth pass). The same columns as {@link withEndUser}.
 */
export async function findConversation(db: Db, projectId: string, id: string): Promise<ConversationWithEndUser | undefined> {
  const { rows } = await sql<ConversationWithEndUser>`
    select c.*, u.external_id as end_user_external_id, u.email as end_user_email, u.name as end_user_name,
      u.verified_at as end_user_verified_at
    from conversations as c left join end_users as u on u.id = c.end_user_id
    where c.project_id = ${projectId} and c.id = ${id}`.execute(db);
  return rows[0];
}

/** The conversation of this project, or 404 `Conversation not found`. */
export async function getConversation(db: Db, projectId: string, id: string): Promise<ConversationWithEndUser> {
  const row = await findConversation(db, projectId, id);
  if (!row) throw NotFound('Conversation not found');
  return row;
}

export interface ConversationFilter {
  /** Only the conversations of the end user the site knows by this id; an unknown one has none. */
  endUserExternalId?: string;
  /** Only the conversations of this end user (`eu_…`). */
  endUserId?: string;
  status?: ConversationStatus;
  /** Created at or after / before this instant. */
  createdFrom?: string;
  createdBefore?: string;
  /** Conversations without a message too (otherwise only those with at least one, unless `handoff` is asked for). */
  includeEmpty?: boolean;
  /**
   * By the ratings given in them: `positive` / `negative` have at least one rating of that kind,
   * `any` at least one rating, `none` no rating at all.
   */
  feedback?: FeedbackFilter;
  /** Only conversations in this handoff state (`any`: requested or active), the inbox of people. */
  handoff?: 'requested' | 'active' | 'any';
}

export type FeedbackFilter = 'positive' | 'negative' | 'any' | 'none';

/**
 * One page of a project's conversations, newest `updatedAt` first (id breaks ties), keyset-paged so
 * pages stay stable while new messages arrive. The status filter applies the status rule in SQL,
 * so it agrees with the status computed on each row at `at`. An invalid cursor is refused even
 * when nothing would be listed.
 */
export async function listConversations(
  db: Db,
  project: Project,
  filter: ConversationFilter,
  page: { limit: number; cursor?: string },
  at = Date.now(),
): Promise<{ rows: ConversationWithEndUser[]; nextCursor?: string }> {
  const after = readCursor(page.cursor);
  let q = withEndUser(db, project.id);
  if (filter.endUserExternalId !== undefined) {
    const user = await findEndUser(db, project.id, filter.endUserExternalId);
    if (!user) return { rows: [] };
    q = q.where('c.end_user_id', '=', user.id);
  }
  if (filter.endUserId) q = q.where('c.end_user_id', '=', filter.endUserId);
  // A handoff needs a person even before anything is written (the widget's button on its home screen).
  if (!filter.includeEmpty && !filter.handoff) q = q.where('c.message_count', '>', 0);
  if (filter.createdFrom) q = q.where('c.created_at', '>=', filter.createdFrom);
  if (filter.createdBefore) q = q.where('c.created_at', '<', filter.createdBefore);
  if (filter.handoff) {
    q = filter.handoff === 'any' ? q.where('c.handoff_status', 'is not', null) : q.where('c.handoff_status', '=', filter.handoff);
    // A handoff ends with its conversation: one idle past the TTL is closed, whatever its row says.
    q = q.where(statusCondition('ACTIVE', idleCutoff(project, at), 'c'));
  }
  if (filter.status) q = q.where(statusCondition(filter.status, idleCutoff(project, at), 'c'));
  if (filter.feedback) {
    const wanted = filter.feedback;
    // The unique (conversation_id, target) index serves this lookup per conversation.
    q = q.where(({ exists, not, selectFrom }) => {
      let rated = selectFrom('feedback as f').select('f.id').whereRef('f.conversation_id', '=', 'c.id');
      if (wanted === 'positive') rated = rated.where('f.rating', '=', 'POSITIVE');
      if (wanted === 'negative') rated = rated.where('f.rating', '=', 'NEGATIVE');
      return wanted === 'none' ? not(exists(rated)) : exists(rated);
    });
  }
  return keysetPage(q, { time: 'c.updated_at', id: 'c.id' }, (r) => ({ time: r.updated_at, id: r.id }), { limit: page.limit, after });
}

/**
 * Closes the conversation; an already closed one keeps its first `closed_at`. 404 when unknown.
 * Closing ends its handoff too: a closed conversation can no longer be answered by anyone, so it
 * leaves the people's inbox. `conversation.closed` goes out when this call closed it (not for a
 * repeat), with the handoff it ended (`previousHandoff`, null when there was none).
 */
export async function closeConversation(db: Db, projectId: string, id: string): Promise<void> {
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const at = now();
      const before = await trx.selectFrom('conversations').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
      if (!before) throw NotFound('Conversation not found');
      const closed = await trx
        .updateTable('conversations')
        .set({ status: 'CLOSED', closed_at: at, ...NO_HANDOFF, declined_streak: 0 })
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .where('status', '=', 'ACTIVE')
        .executeTakeFirst();
      if (Number(closed.numUpdatedRows) === 0) return;
      await enqueueEvent(trx, projectId, 'conversation.closed', {
        conversation: { id, projectId, status: 'CLOSED', closedAt: at },
        previousHandoff: handoffState(before),
      });
    }),
  );
}
