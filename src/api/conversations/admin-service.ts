import type { Kysely } from 'kysely';
import {
  closeConversation,
  getConversation,
  listConversations,
  type ConversationWithEndUser,
  type FeedbackFilter,
} from '../../conversations/conversations.js';
import { listFeedback } from '../../conversations/feedback.js';
import { listMessages } from '../../conversations/messages.js';
import { currentHandoff } from '../../conversations/handoff.js';
import { notifyConversation, type LiveEvents } from '../../conversations/live.js';
import { effectiveStatus } from '../../conversations/status.js';
import type { Project } from '../../projects/project.js';
import type { Database } from '../../store/index.js';
import type { AdminConversation, AdminConversationDetail } from './admin-schema.js';
import { toMessage } from './service.js';

type Db = Kysely<Database>;

export interface AdminConversationFilter {
  status?: 'ACTIVE' | 'CLOSED';
  externalUserId?: string;
  endUserId?: string;
  from?: string;
  to?: string;
  includeEmpty?: boolean;
  feedback?: FeedbackFilter;
  handoff?: 'requested' | 'active' | 'any';
}

export function toAdminConversation(row: ConversationWithEndUser, project: Project, at = Date.now()): AdminConversation {
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
      row.end_user_id && row.end_user_external_id !== null
        ? {
            id: row.end_user_id,
            externalId: row.end_user_external_id,
            email: row.end_user_email,
            name: row.end_user_name,
            verified: row.end_user_verified_at !== null,
          }
        : null,
    handoff: currentHandoff(row, project, at),
  };
}

/**
 * One page of a project's conversations for the admin, newest `updatedAt` first, keyset-paged with
 * the same cursor format as the runtime list.
 */
export async function listAdminConversations(
  db: Db,
  project: Project,
  filter: AdminConversationFilter,
  page: { limit: number; cursor?: string },
): Promise<{ conversations: AdminConversation[]; nextCursor?: string }> {
  const at = Date.now();
  const { rows, nextCursor } = await listConversations(
    db,
    project,
    {
      status: filter.status,
      endUserExternalId: filter.externalUserId,
      endUserId: filter.endUserId,
      createdFrom: filter.from && new Date(filter.from).toISOString(),
      createdBefore: filter.to && new Date(filter.to).toISOString(),
      includeEmpty: filter.includeEmpty,
      feedback: filter.feedback,
      handoff: filter.handoff,
    },
    page,
    at,
  );
  return { conversations: rows.map((r) => toAdminConversation(r, project, at)), ...(nextCursor ? { nextCursor } : {}) };
}

export async function getAdminConversation(db: Db, project: Project, conversationId: string): Promise<AdminConversation> {
  return toAdminConversation(await getConversation(db, project.id, conversationId), project);
}

/** The ratings of a conversation as the admin API shows them, oldest first. */
export async function listConversationFeedback(db: Db, conversationId: string) {
  const rows = await listFeedback(db, conversationId);
  return rows.map((r) => ({ id: r.id, messageId: r.message_id, rating: r.rating, comment: r.comment, createdAt: r.created_at }));
}

/**
 * A conversation as the admin reads it: with its end user, every message oldest first (each
 * version of a regenerated answer, marked `supersededBy`) and the ratings given in it.
 */
export async function readAdminConversation(db: Db, project: Project, conversationId: string): Promise<AdminConversationDetail> {
  const conversation = await getAdminConversation(db, project, conversationId);
  const [rows, feedback] = await Promise.all([
    listMessages(db, conversation.id, { includeSuperseded: true }),
    listConversationFeedback(db, conversation.id),
  ]);
  return {
    conversation,
    messages: rows.map((r) => ({ ...toMessage(r), model: r.model, supersededBy: r.superseded_by, outcome: r.outcome })),
    feedback,
  };
}

/** Closes the conversation (idempotent: an already closed one keeps its first closedAt). */
export async function closeAdminConversation(db: Db, project: Project, conversationId: string, events?: LiveEvents): Promise<AdminConversation> {
  await closeConversation(db, project.id, conversationId);
  // The dashboard inbox (and the widget's stream) hear of it at once, on every node.
  await notifyConversation(events, { id: conversationId, project_id: project.id }, 'closed');
  return getAdminConversation(db, project, conversationId);
}
