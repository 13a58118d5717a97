import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { clipText } from '../lib/nul.js';
import { retryDeadlock, type Database } from '../store/index.js';
import { lockRow } from '../store/lock.js';
import type { ConversationsTable, MessageOutcome, MessagesTable } from '../store/schema.js';
import { enqueueEvent } from '../webhooks/events.js';

type Db = Kysely<Database>;
export type MessageRow = Selectable<MessagesTable>;

/** Characters of the last message a conversation keeps as its preview. */
export const PREVIEW_LENGTH = 150;

/**
 * A conversation's messages, oldest first. Answers replaced by a regenerate are left out unless
 * `includeSuperseded` (the admin's view of every version).
 */
export async function listMessages(db: Db, conversationId: string, options: { includeSuperseded?: boolean } = {}): Promise<MessageRow[]> {
  let q = db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId);
  if (!options.includeSuperseded) q = q.where('superseded_by', 'is', null);
  return q.orderBy('seq', 'asc').execute();
}

/** A message as an answer needs it: who said what, and whether it failed. */
/** The author of a stored assistant message, as every read and event shows it. */
export function authorOf(row: Pick<MessageRow, 'author_type' | 'author_id' | 'author_name'>): MessageAuthor {
  return row.author_type === 'human' ? { type: 'human', id: row.author_id, name: row.author_name ?? '' } : { type: 'agent' };
}

export type HistoryMessage = Pick<MessageRow, 'id' | 'role' | 'content' | 'status'>;

/**
 * A conversation's current messages as an answer reads them (oldest first, superseded answers left
 * out): only the columns the send and the model use. The parts, sources and usage of every earlier
 * answer (tool outputs with their passages) are neither read nor held while the answer streams.
 */
export async function listHistory(db: Db, conversationId: string): Promise<HistoryMessage[]> {
  // SQL text, as the send's other statements: the query builder cost more than the statement.
  const { rows } = await sql<HistoryMessage>`
    select id, role, content, status from messages
    where conversation_id = ${conversationId} and superseded_by is null
    order by seq`.execute(db);
  return rows;
}

/** Current messages of a conversation after position `seq`, oldest first (the live stream's catch-up). */
export async function messagesAfter(db: Db, conversationId: string, seq: number, limit = 200): Promise<MessageRow[]> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('seq', '>', seq)
    .where('superseded_by', 'is', null)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
}

/** The highest position in a conversation (0 when it has no message). */
export async function lastSeq(db: Db, conversationId: string): Promise<number> {
  const top = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return Number(top?.seq ?? 0);
}

/** The message `messageId` of this conversation, if it is one. */
export async function findMessage(db: Db, conversationId: string, messageId: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', messageId).where('conversation_id', '=', conversationId).executeTakeFirst();
}

/** Whether a message with this id is stored (in any conversation). */
export async function messageExists(db: Db, messageId: string): Promise<boolean> {
  return (await db.selectFrom('messages').select('id').where('id', '=', messageId).executeTakeFirst()) !== undefined;
}

export interface NewMessage {
  role: 'user' | 'assistant';
  content: string;
  parts?: unknown[] | null;
  sources?: unknown[] | null;
  status: MessageRow['status'];
  model?: string | null;
  usage?: unknown;
  /** What an answer did; ignored for user messages, which have none. */
  outcome?: MessageOutcome | null;
  id?: string;
  /** A regenerated answer: the id of the answer it replaces, which is then marked superseded. */
  supersedes?: string;
  /** Who wrote an assistant message; default the agent. A person's reply is `{type:'human', id?, name}`. */
  author?: MessageAuthor;
}

export type MessageAuthor = { type: 'agent' } | { type: 'human'; id?: string | null; name: string };

/**
 * Appends a message and updates the conversation's count, preview, last role and updatedAt, in one
 * transaction. `seq` follows the conversation's highest one: the conversation's row is locked
 * first, so two messages written at once (a visitor's and a teammate's reply) take their turns
 * rather than the same position, and the (conversation, seq) unique index stays a backstop. With
 * `supersedes` the message replaces that answer: the old one is marked superseded and the count
 * stays the same. `message.created` goes out in the same transaction.
 */
export async function appendMessage(db: Db, conversation: Pick<ConversationsTable, 'id' | 'project_id'>, msg: NewMessage): Promise<MessageRow> {
  // A project deleted at the same moment can pick this as its deadlock's victim: run again, it finds
  // the conversation gone (404).
  return retryDeadlock(() => appendMessageOnce(db, conversation, msg));
}

async function appendMessageOnce(db: Db, conversation: Pick<ConversationsTable, 'id' | 'project_id'>, msg: NewMessage): Promise<MessageRow> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockRow(trx, 'conversations', conversation.id))) throw NotFound('Conversation not found');
    const at = now();
    // The count and the highest position in one round trip. This and the two writes below run twice
    // per answer, as SQL text like other hot queries: building and compiling them with the query
    // builder cost more than running them.
    const { rows } = await sql<{ message_count: number; top_seq: number | null }>`
      select message_count, (select max(seq) from messages where conversation_id = ${conversation.id}) as top_seq
      from conversations where id = ${conversation.id}`.execute(trx);
    const conv = rows[0]!;
    const id = msg.id ?? newId('msg');
    let replaced = false;
    if (msg.supersedes) {
      const res = await trx
        .updateTable('messages')
        .set({ superseded_by: id, updated_at: at })
        .where('id', '=', msg.supersedes)
        .where('conversation_id', '=', conversation.id)
        .where('superseded_by', 'is', null)
        .executeTakeFirst();
      replaced = Number(res.numUpdatedRows) > 0;
    }
    const row: MessageRow = {
      id,
      conversation_id: conversation.id,
      project_id: conversation.project_id,
      seq: Number(conv.top_seq ?? 0) + 1,
      role: msg.role,
      content: msg.content,
      parts: msg.parts ? JSON.stringify(msg.parts) : null,
      sources: msg.sources ? JSON.stringify(msg.sources) : null,
      status: msg.status,
      model: msg.model ?? null,
      usage: msg.usage === undefined || msg.usage === null ? null : JSON.stringify(msg.usage),
      superseded_by: null,
      outcome: msg.role === 'assistant' ? (msg.outcome ?? null) : null,
      created_at: at,
      updated_at: at,
      author_type: msg.role === 'assistant' ? (msg.author?.type ?? 'agent') : null,
      author_id: msg.author?.type === 'human' ? (msg.author.id ?? null) : null,
      author_name: msg.author?.type === 'human' ? msg.author.name : null,
    };
    await sql`
      insert into messages (id, conversation_id, project_id, seq, role, content, parts, sources, status, model, usage,
        superseded_by, outcome, created_at, updated_at, author_type, author_id, author_name)
      values (${row.id}, ${row.conversation_id}, ${row.project_id}, ${row.seq}, ${row.role}, ${row.content}, ${row.parts},
        ${row.sources}, ${row.status}, ${row.model}, ${row.usage}, ${row.superseded_by}, ${row.outcome}, ${row.created_at},
        ${row.updated_at}, ${row.author_type}, ${row.author_id}, ${row.author_name})`.execute(trx);
    await sql`
      update conversations
      set message_count = ${replaced ? conv.message_count : Number(conv.message_count) + 1},
        last_message_preview = ${clipText(msg.content, PREVIEW_LENGTH)},
        last_message_role = ${msg.role === 'user' ? 'USER' : 'ASSISTANT'},
        updated_at = ${at}
      where id = ${conversation.id}`.execute(trx);
    await enqueueEvent(trx, conversation.project_id, 'message.created', {
      conversationId: conversation.id,
      message: {
        id,
        role: row.role,
        content: row.content,
        status: row.status,
        outcome: row.outcome,
        ...(row.author_type ? { author: authorOf(row) } : {}),
        sources: msg.sources ?? null,
        ...(replaced ? { supersedes: msg.supersedes } : {}),
        createdAt: at,
      },
    });
    return row;
  });
}
