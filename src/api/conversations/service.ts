import type { Kysely, Selectable } from 'kysely';
import { BadRequest, NotFound } from '../../lib/errors.js';
import { newId, now } from '../../lib/ids.js';
import type { Database } from '../../store/index.js';
import type { ConversationsTable, MessagesTable } from '../../store/schema.js';
import { DEFAULT_TTL_MINUTES, type Project } from '../projects/schema.js';
import { upsertEndUser } from '../end-users/service.js';
import type { ConversationSummary, Message } from './schema.js';

type Db = Kysely<Database>;
export type ConversationRow = Selectable<ConversationsTable>;
export type MessageRow = Selectable<MessagesTable>;

export const PREVIEW_LENGTH = 150;

/**
 * CLOSED when closed explicitly or idle past the project's TTL. Computed on read, so expiry never
 * depends on a timer having run.
 */
export function effectiveStatus(row: Pick<ConversationRow, 'status' | 'updated_at'>, project: Project, at = Date.now()): 'ACTIVE' | 'CLOSED' {
  if (row.status === 'CLOSED') return 'CLOSED';
  const ttl = (project.settings.conversationTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000;
  return Date.parse(row.updated_at) + ttl < at ? 'CLOSED' : 'ACTIVE';
}

export async function createConversation(
  db: Db,
  projectId: string,
  endUserExternalId?: string,
): Promise<ConversationRow> {
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
  };
  await db.insertInto('conversations').values(row).execute();
  return row;
}

/** The conversation of this project, or undefined (another project's counts as unknown). */
export async function findConversation(db: Db, projectId: string, id: string) {
  return db
    .selectFrom('conversations as c')
    .leftJoin('end_users as u', 'u.id', 'c.end_user_id')
    .selectAll('c')
    .select(['u.external_id as end_user_external_id', 'u.verified_at as end_user_verified_at'])
    .where('c.id', '=', id)
    .where('c.project_id', '=', projectId)
    .executeTakeFirst();
}

export async function getConversationOr404(db: Db, projectId: string, id: string) {
  const row = await findConversation(db, projectId, id);
  if (!row) throw NotFound('Conversation not found');
  return row;
}

export function toSummary(row: ConversationRow, project: Project): ConversationSummary {
  return {
    id: row.id,
    status: effectiveStatus(row, project),
    messageCount: row.message_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastMessagePreview: row.last_message_preview ?? '',
    lastMessageRole: row.last_message_role ?? 'USER',
  };
}

interface Cursor {
  updatedAt: string;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.updatedAt, c.id])).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof updatedAt === 'string' && typeof id === 'string') return { updatedAt, id };
  } catch {
    // fall through to the validation error
  }
  throw BadRequest('Validation error', { details: [{ path: 'cursor', message: 'Invalid cursor' }] });
}

/**
 * One page of conversations that have at least one message, newest `updatedAt` first (id breaks
 * ties), with keyset paging so pages stay stable while new messages arrive.
 */
export async function listConversationPage(
  db: Db,
  filter: { projectId: string; endUserId?: string | null; status?: 'ACTIVE' | 'CLOSED'; project: Project },
  page: { limit: number; cursor?: string },
): Promise<{ rows: ConversationRow[]; nextCursor?: string }> {
  let q = db
    .selectFrom('conversations')
    .selectAll()
    .where('project_id', '=', filter.projectId)
    .where('message_count', '>', 0);
  if (filter.endUserId !== undefined) {
    q = filter.endUserId === null ? q.where('end_user_id', 'is', null) : q.where('end_user_id', '=', filter.endUserId);
  }
  if (filter.status) {
    const ttl = (filter.project.settings.conversationTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000;
    const cutoff = new Date(Date.now() - ttl).toISOString();
    q =
      filter.status === 'ACTIVE'
        ? q.where('status', '=', 'ACTIVE').where('updated_at', '>=', cutoff)
        : q.where((eb) => eb.or([eb('status', '=', 'CLOSED'), eb('updated_at', '<', cutoff)]));
  }
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    q = q.where((eb) =>
      eb.or([eb('updated_at', '<', c.updatedAt), eb.and([eb('updated_at', '=', c.updatedAt), eb('id', '<', c.id)])]),
    );
  }
  const rows = await q.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  const more = rows.length > page.limit;
  const pageRows = more ? rows.slice(0, page.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { rows: pageRows, nextCursor: more && last ? encodeCursor({ updatedAt: last.updated_at, id: last.id }) : undefined };
}

export async function listMessages(db: Db, conversationId: string): Promise<MessageRow[]> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq', 'asc').execute();
}

/** The last `n` messages of a conversation, oldest first. */
export async function lastMessages(db: Db, conversationId: string, n: number): Promise<MessageRow[]> {
  const rows = await db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .orderBy('seq', 'desc')
    .limit(n)
    .execute();
  return rows.reverse();
}

export function toMessage(row: MessageRow): Message {
  const base: Message = { id: row.id, role: row.role, content: row.content, createdAt: row.created_at };
  if (row.role === 'assistant') {
    base.status = row.status;
    if (row.sources) base.sources = JSON.parse(row.sources);
    if (row.parts) base.parts = JSON.parse(row.parts);
  }
  return base;
}

export async function closeConversation(db: Db, projectId: string, id: string): Promise<ConversationRow> {
  const at = now();
  await db
    .updateTable('conversations')
    .set({ status: 'CLOSED', closed_at: at })
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
  const row = await db.selectFrom('conversations').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Conversation not found');
  return row;
}

export interface NewMessage {
  role: 'user' | 'assistant';
  content: string;
  parts?: unknown[] | null;
  sources?: unknown[] | null;
  status: MessageRow['status'];
  model?: string | null;
  usage?: unknown;
  id?: string;
}

/**
 * Appends a message and updates the conversation's count, preview, last role and updatedAt, in one
 * transaction. `seq` comes from the count, and the (conversation, seq) unique index makes two
 * writers that raced fail loudly instead of interleaving.
 */
export async function appendMessage(db: Db, conversation: Pick<ConversationRow, 'id' | 'project_id'>, msg: NewMessage): Promise<MessageRow> {
  return db.transaction().execute(async (trx) => {
    const at = now();
    const conv = await trx
      .selectFrom('conversations')
      .select(['message_count'])
      .where('id', '=', conversation.id)
      .executeTakeFirstOrThrow();
    const row: MessageRow = {
      id: msg.id ?? newId('msg'),
      conversation_id: conversation.id,
      project_id: conversation.project_id,
      seq: conv.message_count + 1,
      role: msg.role,
      content: msg.content,
      parts: msg.parts ? JSON.stringify(msg.parts) : null,
      sources: msg.sources ? JSON.stringify(msg.sources) : null,
      status: msg.status,
      model: msg.model ?? null,
      usage: msg.usage === undefined || msg.usage === null ? null : JSON.stringify(msg.usage),
      created_at: at,
      updated_at: at,
    };
    await trx.insertInto('messages').values(row).execute();
    await trx
      .updateTable('conversations')
      .set({
        message_count: row.seq,
        last_message_preview: msg.content.slice(0, PREVIEW_LENGTH),
        last_message_role: msg.role === 'user' ? 'USER' : 'ASSISTANT',
        updated_at: at,
      })
      .where('id', '=', conversation.id)
      .execute();
    return row;
  });
}
