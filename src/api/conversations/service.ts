import type { Kysely } from 'kysely';
import { listConversations, type ConversationRow } from '../../conversations/conversations.js';
import { authorOf, type MessageRow } from '../../conversations/messages.js';
import { currentHandoff } from '../../conversations/handoff.js';
import { effectiveStatus } from '../../conversations/status.js';
import type { Project } from '../../projects/project.js';
import type { Database } from '../../store/index.js';
import type { ConversationSummary, Message } from './schema.js';

type Db = Kysely<Database>;

function toSummary(row: ConversationRow, project: Project, at = Date.now()): ConversationSummary {
  return {
    id: row.id,
    status: effectiveStatus(row, project, at),
    messageCount: row.message_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastMessagePreview: row.last_message_preview ?? '',
    lastMessageRole: row.last_message_role ?? 'USER',
    handoff: currentHandoff(row, project, at),
  };
}

export function toMessage(row: MessageRow): Message {
  const base: Message = { id: row.id, role: row.role, content: row.content, createdAt: row.created_at };
  if (row.role === 'assistant') {
    base.status = row.status;
    if (row.sources) base.sources = JSON.parse(row.sources);
    if (row.parts) base.parts = JSON.parse(row.parts);
    base.author = authorOf(row);
  }
  return base;
}

/**
 * One page of an end user's conversations that have a message, newest first. An unknown user has
 * none: the list does not reveal which user ids exist.
 */
export async function listUserConversations(
  db: Db,
  project: Project,
  userId: string,
  page: { limit: number; cursor?: string },
): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }> {
  const at = Date.now();
  const { rows, nextCursor } = await listConversations(db, project, { endUserExternalId: userId }, page, at);
  return { conversations: rows.map((r) => toSummary(r, project, at)), ...(nextCursor ? { nextCursor } : {}) };
}
