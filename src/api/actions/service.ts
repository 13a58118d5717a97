import type { Kysely } from 'kysely';
import {
  RESERVED_HEADERS,
  SECRET_MASK,
  isSensitiveHeaderName,
  actionFields,
  parseStoredHeaders,
  secretContext,
  toDefinition,
  type ActionDefinition,
  type ActionMethod,
  type ActionRow,
  type StoredHeader,
} from '../../actions/definition.js';
import { checkParametersSchema } from '../../actions/json-schema.js';
import { checkUrlTemplate, urlPlaceholders } from '../../actions/request.js';
import type { SecretBox } from '../../actions/secret-box.js';
import { Conflict, NotFound, ValidationError, type ErrorDetail } from '../../lib/errors.js';
import { newId, now } from '../../lib/ids.js';
import { isUniqueViolation, type Database } from '../../store/index.js';
import type { Action, ActionCall, CreateActionBody, PatchActionBody } from './schema.js';

type Db = Kysely<Database>;
type HeaderInput = CreateActionBody['headers'][string];

/** The public view: secret header values masked, never decrypted. */
export function toAction(row: ActionRow): Action {
  const headers: Action['headers'] = {};
  for (const h of parseStoredHeaders(row)) headers[h.name] = h.secret ? { value: SECRET_MASK, secret: true } : { value: h.value, secret: false };
  return { ...actionFields(row), headers, createdAt: row.created_at, updatedAt: row.updated_at };

}

/**
 * Turns the `headers` input into what is stored: secret values sealed for this action, public ones
 * in clear. A secret sent back as the mask keeps the value stored under that name.
 */
function storeHeaders(box: SecretBox, actionId: string, input: Record<string, HeaderInput>, previous: StoredHeader[]): StoredHeader[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const out: StoredHeader[] = [];
  for (const [name, raw] of Object.entries(input)) {
    const lower = name.toLowerCase();
    const path = `headers.${name}`;
    if (seen.has(lower)) details.push({ path, message: 'is given twice (header names are case-insensitive)' });
    seen.add(lower);
    if (RESERVED_HEADERS.has(lower)) details.push({ path, message: 'is set by AnswerDesk or the HTTP client and cannot be configured' });
    const { value, secret } = typeof raw === 'string' ? { value: raw, secret: isSensitiveHeaderName(name) } : { value: raw.value, secret: raw.secret ?? isSensitiveHeaderName(name) };
    if (secret && value === SECRET_MASK) {
      const kept = previous.find((p) => p.secret && p.name.toLowerCase() === lower);
      if (kept) out.push({ ...kept, name });
      else details.push({ path, message: `"${SECRET_MASK}" keeps a stored secret, but this header has none; send the real value` });
      continue;
    }
    out.push(secret ? { name, secret: true, enc: box.seal(value, secretContext(actionId, name)) } : { name, secret: false, value });
  }
  if (details.length) throw ValidationError(details);
  return out;
}

interface Shape {
  method: ActionMethod;
  url: string;
  parameters: Record<string, unknown>;
  query: string[] | null | undefined;
  body: string[] | null | undefined;
}

/**
 * Cross-field rules a zod shape cannot say: a usable JSON Schema, a URL template whose placeholders
 * are required parameters, and query/body lists that name parameters once each.
 */
export function checkDefinition(def: Shape): ErrorDetail[] {
  const details = [...checkParametersSchema(def.parameters), ...checkUrlTemplate(def.url)];
  const props = (def.parameters.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(def.parameters.required) ? (def.parameters.required as string[]) : []);
  const known = (n: string) => Object.prototype.hasOwnProperty.call(props, n);
  const placeholders = urlPlaceholders(def.url);
  for (const name of placeholders) {
    if (!known(name)) details.push({ path: 'url', message: `placeholder {${name}} is not a property in parameters` });
    else if (!required.has(name)) details.push({ path: 'parameters.required', message: `must include "${name}" (used in the URL)` });
  }
  for (const list of ['query', 'body'] as const) {
    for (const [i, name] of (def[list] ?? []).entries()) {
      if (!known(name)) details.push({ path: `${list}.${i}`, message: `"${name}" is not a property in parameters` });
      if (placeholders.includes(name)) details.push({ path: `${list}.${i}`, message: `"${name}" already fills a URL placeholder` });
    }
  }
  for (const [i, name] of (def.body ?? []).entries()) {
    if (def.query?.includes(name)) details.push({ path: `body.${i}`, message: `"${name}" is listed in both query and body` });
  }
  if (def.method === 'GET' && def.body?.length) details.push({ path: 'body', message: 'GET requests have no body; use query' });
  return details;
}

function nameTaken(name: string) {
  return Conflict(`An action named "${name}" already exists in this project`);
}

async function assertNameFree(db: Db, projectId: string, name: string, exceptId?: string): Promise<void> {
  let q = db.selectFrom('actions').select('id').where('project_id', '=', projectId).where('name', '=', name);
  if (exceptId) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw nameTaken(name);
}

export async function createAction(db: Db, box: SecretBox, projectId: string, input: CreateActionBody): Promise<Action> {
  const details = checkDefinition({ ...input, query: input.query ?? null, body: input.body ?? null });
  if (details.length) throw ValidationError(details);
  await assertNameFree(db, projectId, input.name);
  const id = newId('act');
  const at = now();
  const row: ActionRow = {
    id,
    project_id: projectId,
    name: input.name,
    description: input.description,
    method: input.method,
    url: input.url,
    headers: JSON.stringify(storeHeaders(box, id, input.headers, [])),
    parameters: JSON.stringify(input.parameters),
    query_params: input.query ? JSON.stringify(input.query) : null,
    body_params: input.body ? JSON.stringify(input.body) : null,
    examples: JSON.stringify(input.examples),
    timeout_ms: input.timeoutMs,
    enabled: input.enabled ? 1 : 0,
    created_at: at,
    updated_at: at,
  };
  try {
    await db.insertInto('actions').values(row).execute();
  } catch (err) {
    // Two creates racing past the check: the unique index decides.
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return toAction(row);
}

export async function listActions(db: Db, projectId: string): Promise<Action[]> {
  const rows = await db.selectFrom('actions').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(toAction);
}

export async function getActionRow(db: Db, projectId: string, id: string): Promise<ActionRow> {
  const row = await db.selectFrom('actions').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Action not found');
  return row;
}

/** Applies a partial update; the merged definition is checked as a whole, like a create. */
export async function updateAction(db: Db, box: SecretBox, projectId: string, id: string, patch: PatchActionBody): Promise<Action> {
  const row = await getActionRow(db, projectId, id);
  const current = toAction(row);
  const merged: Shape = {
    method: patch.method ?? current.method,
    url: patch.url ?? current.url,
    parameters: patch.parameters ?? current.parameters,
    query: patch.query === undefined ? current.query : patch.query,
    body: patch.body === undefined ? current.body : patch.body,
  };
  const details = checkDefinition(merged);
  if (details.length) throw ValidationError(details);
  if (patch.name && patch.name !== row.name) await assertNameFree(db, projectId, patch.name, id);
  const set: Partial<ActionRow> = { updated_at: now() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.method !== undefined) set.method = patch.method;
  if (patch.url !== undefined) set.url = patch.url;
  if (patch.headers !== undefined) set.headers = JSON.stringify(storeHeaders(box, id, patch.headers, parseStoredHeaders(row)));
  if (patch.parameters !== undefined) set.parameters = JSON.stringify(patch.parameters);
  if (patch.query !== undefined) set.query_params = patch.query ? JSON.stringify(patch.query) : null;
  if (patch.body !== undefined) set.body_params = patch.body ? JSON.stringify(patch.body) : null;
  if (patch.examples !== undefined) set.examples = JSON.stringify(patch.examples);
  if (patch.timeoutMs !== undefined) set.timeout_ms = patch.timeoutMs;
  if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
  try {
    await db.updateTable('actions').set(set).where('id', '=', id).where('project_id', '=', projectId).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(patch.name ?? row.name);
    throw err;
  }
  return toAction({ ...row, ...set });
}

export async function deleteAction(db: Db, projectId: string, id: string): Promise<void> {
  const res = await db.deleteFrom('actions').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw NotFound('Action not found');
}

/** One action ready to run (secrets decrypted). */
export async function loadAction(db: Db, box: SecretBox, projectId: string, id: string): Promise<ActionDefinition> {
  return toDefinition(await getActionRow(db, projectId, id), box);
}

/**
 * The project's enabled actions, ready to run: what the agent offers as tools. An action whose
 * secrets cannot be opened (the key changed) is reported to `onUnreadable` and left out, so the
 * others stay available.
 */
export async function loadEnabledActions(
  db: Db,
  box: SecretBox,
  projectId: string,
  onUnreadable: (actionId: string, err: unknown) => void = (_, err) => {
    throw err;
  },
): Promise<ActionDefinition[]> {
  const rows = await db
    .selectFrom('actions')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('enabled', '=', 1)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.flatMap((r) => {
    try {
      return [toDefinition(r, box)];
    } catch (err) {
      onUnreadable(r.id, err);
      return [];
    }
  });
}

interface CallCursor {
  createdAt: string;
  id: string;
}

function encodeCallCursor(c: CallCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
}

function decodeCallCursor(raw: string): CallCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof createdAt === 'string' && typeof id === 'string') return { createdAt, id };
  } catch {
    // fall through to the validation error
  }
  throw ValidationError([{ path: 'cursor', message: 'Invalid cursor' }]);
}

/** One page of an action's call log, newest first (keyset paging: stable while calls are added). */
export async function listCalls(db: Db, actionId: string, page: { limit: number; cursor?: string }): Promise<{ calls: ActionCall[]; nextCursor?: string }> {
  let q = db.selectFrom('action_calls').selectAll().where('action_id', '=', actionId);
  if (page.cursor) {
    const c = decodeCallCursor(page.cursor);
    q = q.where((eb) => eb.or([eb('created_at', '<', c.createdAt), eb.and([eb('created_at', '=', c.createdAt), eb('id', '<', c.id)])]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const last = shown[shown.length - 1];
  return {
    calls: shown.map((r) => ({
      id: r.id,
      createdAt: r.created_at,
      source: r.source,
      conversationId: r.conversation_id,
      outcome: r.outcome,
      status: r.http_status,
      latencyMs: r.latency_ms,
      error: r.error,
    })),
    ...(more && last ? { nextCursor: encodeCallCursor({ createdAt: last.created_at, id: last.id }) } : {}),
  };
}
