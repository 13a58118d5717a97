import type { Kysely } from 'kysely';
import * as actions from '../../actions/actions.js';
import { listCalls, type ActionCallRow } from '../../actions/calls.js';
import { SECRET_MASK, actionFields, parseStoredHeaders, type ActionRow } from '../../actions/definition.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Database } from '../../store/index.js';
import type { Action, ActionCall, CreateActionBody, PatchActionBody } from './schema.js';

type Db = Kysely<Database>;

/** The public view: secret header values masked, never decrypted. */
export function toAction(row: ActionRow): Action {
  const headers: Action['headers'] = {};
  for (const h of parseStoredHeaders(row)) headers[h.name] = h.secret ? { value: SECRET_MASK, secret: true } : { value: h.value, secret: false };
  return { ...actionFields(row), headers, createdAt: row.created_at, updatedAt: row.updated_at };
}

function toActionCall(row: ActionCallRow): ActionCall {
  return {
    id: row.id,
    createdAt: row.created_at,
    source: row.source,
    conversationId: row.conversation_id,
    outcome: row.outcome,
    status: row.http_status,
    latencyMs: row.latency_ms,
    error: row.error,
  };
}

export async function createAction(db: Db, box: SecretBox, projectId: string, input: CreateActionBody, urls: actions.UrlPolicy): Promise<Action> {
  return toAction(await actions.createAction(db, box, projectId, input, urls));
}

export async function listActions(db: Db, projectId: string): Promise<Action[]> {
  return (await actions.listActions(db, projectId)).map(toAction);
}

export async function getAction(db: Db, projectId: string, id: string): Promise<Action> {
  return toAction(await actions.getActionRow(db, projectId, id));
}

export async function updateAction(db: Db, box: SecretBox, projectId: string, id: string, patch: PatchActionBody, urls: actions.UrlPolicy): Promise<Action> {
  return toAction(await actions.updateAction(db, box, projectId, id, patch, urls));
}

/** One page of the call log of an action of the project (404 for another project's action). */
export async function listActionCalls(
  db: Db,
  projectId: string,
  actionId: string,
  page: { limit: number; cursor?: string },
): Promise<{ calls: ActionCall[]; nextCursor?: string }> {
  const action = await actions.getActionRow(db, projectId, actionId);
  const { rows, nextCursor } = await listCalls(db, action.id, page);
  return { calls: rows.map(toActionCall), ...(nextCursor ? { nextCursor } : {}) };
}
