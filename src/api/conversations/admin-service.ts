import type { Kysely } from 'kysely';
import { NotFound } from '../../lib/errors.js';
import type { Database } from '../../store/index.js';
import { DEFAULT_TTL_MINUTES, type Project } from '../projects/schema.js';
import type { AdminConversation } from './admin-schema.js';
import { closeConversation, decodeCursor, effectiveStatus, encodeCursor, type ConversationRow } from './service.js';

type Db = Kysely<Database>;

export interface AdminConversationFilter {
  status?: 'ACTIVE' | 'CLOSED';
  externalUserId?: string;
  endUserId?: string;
  from?: string;
  to?: string;
  includeEmpty?: boolean;
}

type JoinedRow = ConversationRow & {
  eu_external_id: string | null;
  eu_email: string | null;
  eu_name: string | null;
  eu_verified_at: string | null;
};

function baseQuery(db: Db, projectId: string) {
  return db
    .selectFrom('conversations as c')
    .leftJoin('end_users as u', 'u.id', 'c.end_user_id')
    .selectAll('c')
    .select([
      'u.external_id as eu_external_id',
      'u.email as eu_email',
      'u.name as eu_name',
      'u.verified_at as eu_verified_at',
    ])
    .where('c.project_id', '=', projectId);
}

export function toAdminConversation(row: JoinedRow, project: Project, at = Date.now()): AdminConversation {
  return {
    id: row.id,
    status: effectiveStatus(row, project, at),
    messageCount: row.message_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    closedAt: row.closed_at,
    lastMessagePreview: row.last_message_preview,
    lastMessageRole: row.last_message_role,
    endUser:
      row.end_user_id && row.eu_external_id !== null
        ? {
            id: row.end_user_id,
            externalId: row.eu_external_id,
            email: row.eu_email,
            name: row.eu_name,
            verified: row.eu_verified_at !== null,
          }
        : null,
  };
}

/**
 * One page of a project's conversations for the admin, newest `updatedAt` first, keyset-paged with
 * the same cursor format as the runtime list. The status filter is evaluated in SQL against the TTL
 * cutoff, so it agrees with the status computed on each row.
 */
export async function listAdminConversations(
  db: Db,
  project: Project,
  filter: AdminConversationFilter,
  page: { limit: number; cursor?: string },
): Promise<{ conversations: AdminConversation[]; nextCursor?: string }> {
  const at = Date.now();
  let q = baseQuery(db, project.id);
  if (!filter.includeEmpty) q = q.where('c.message_count', '>', 0);
  if (filter.endUserId) q = q.where('c.end_user_id', '=', filter.endUserId);
  if (filter.externalUserId) q = q.where('u.external_id', '=', filter.externalUserId);
  if (filter.from) q = q.where('c.created_at', '>=', new Date(filter.from).toISOString());
  if (filter.to) q = q.where('c.created_at', '<', new Date(filter.to).toISOString());
  if (filter.status) {
    const ttl = (project.settings.conversationTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000;
    const cutoff = new Date(at - ttl).toISOString();
    q =
      filter.status === 'ACTIVE'
        ? q.where('c.status', '=', 'ACTIVE').where('c.updated_at', '>=', cutoff)
        : q.where((eb) => eb.or([eb('c.status', '=', 'CLOSED'), eb('c.updated_at', '<', cutoff)]));
  }
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    q = q.where((eb) =>
      eb.or([eb('c.updated_at', '<', c.updatedAt), eb.and([eb('c.updated_at', '=', c.updatedAt), eb('c.id', '<', c.id)])]),
    );
  }
  const rows = await q.orderBy('c.updated_at', 'desc').orderBy('c.id', 'desc').limit(page.limit + 1).execute();
  const more = rows.length > page.limit;
  const pageRows = more ? rows.slice(0, page.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    conversations: pageRows.map((r) => toAdminConversation(r, project, at)),
    ...(more && last ? { nextCursor: encodeCursor({ updatedAt: last.updated_at, id: last.id }) } : {}),
  };
}

export async function getAdminConversation(db: Db, project: Project, conversationId: string): Promise<AdminConversation> {
  const row = await baseQuery(db, project.id).where('c.id', '=', conversationId).executeTakeFirst();
  if (!row) throw NotFound('Conversation not found');
  return toAdminConversation(row, project);
}

export async function listConversationFeedback(db: Db, conversationId: string) {
  const rows = await db
    .selectFrom('feedback')
    .select(['id', 'message_id', 'rating', 'comment', 'created_at'])
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({ id: r.id, messageId: r.message_id, rating: r.rating, comment: r.comment, createdAt: r.created_at }));
}

/** Closes the conversation (idempotent: an already closed one keeps its first closedAt). */
export async function closeAdminConversation(db: Db, project: Project, conversationId: string): Promise<AdminConversation> {
  await closeConversation(db, project.id, conversationId);
  return getAdminConversation(db, project, conversationId);
}
