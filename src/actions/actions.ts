import type { Kysely } from 'kysely';
import { Conflict, NotFound, ValidationError, type ErrorDetail } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { isUniqueViolation, projectGone, type Database } from '../store/index.js';
import {
  RESERVED_HEADERS,
  SECRET_MASK,
  actionFields,
  isSensitiveHeaderName,
  parseStoredHeaders,
  secretContext,
  toDefinition,
  type ActionDefinition,
  type ActionMethod,
  type ActionRow,
  type StoredHeader,
} from './definition.js';
import { checkParametersSchema } from './json-schema.js';
import { refusePrivateHost } from '../net/address-policy.js';
import { checkUrlTemplate, urlPlaceholders, urlTemplateTarget } from './request.js';
import type { SecretBox } from '../lib/secret-box.js';

type Db = Kysely<Database>;

/** A configured header as given: a value (secret when its name looks like a credential), or a value marked secret or not. */
export type HeaderInput = string | { value: string; secret?: boolean };

/** An action as it is created. */
export interface ActionInput {
  name: string;
  description: string;
  method: ActionMethod;
  url: string;
  headers: Record<string, HeaderInput>;
  parameters: Record<string, unknown>;
  /** Parameters sent in the query string / in the JSON body; absent or null: by method. */
  query?: string[] | null;
  body?: string[] | null;
  examples: string[];
  timeoutMs: number;
  enabled: boolean;
}

/** A change of an action: the fields given replace the stored ones. */
export type ActionPatch = Partial<ActionInput>;

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
    const kept = previous.find((p) => p.secret && p.name.toLowerCase() === lower);
    // Without `secret`, a header is secret when its name looks like a credential or it holds a
    // stored secret: the mask read back in the short form (`"X-Shop-Id": "********"`) keeps it.
    const secretByDefault = isSensitiveHeaderName(name) || kept !== undefined;
    const { value, secret } = typeof raw === 'string' ? { value: raw, secret: secretByDefault } : { value: raw.value, secret: raw.secret ?? secretByDefault };
    if (value === SECRET_MASK) {
      if (secret && kept) out.push({ ...kept, name });
      else if (secret) details.push({ path, message: `"${SECRET_MASK}" keeps a stored secret, but this header has none; send the real value` });
      // The mask read back from a secret header, now marked public: storing it would replace the
      // secret with the mask itself, and making a secret public needs its real value anyway.
      else if (kept) details.push({ path, message: `"${SECRET_MASK}" is the mask of this header's stored secret; to make the header public, send its real value` });
      else out.push({ name, secret: false, value });
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

/** ANSWERDESK_ALLOW_PRIVATE_NETWORK: whether an action may be given a private or loopback host. */
export interface UrlPolicy {
  allowPrivateNetwork: boolean;
}

/**
 * Refuses (400) a URL template whose host the call guard would refuse whatever DNS says (a literal
 * private or loopback address, `localhost`), unless private networks are allowed: such an action
 * would only fail at every call. Other host names are checked at each call, when they are resolved.
 */
function checkActionHost(template: string, urls: UrlPolicy): void {
  refusePrivateHost(urlTemplateTarget(template), urls.allowPrivateNetwork);
}

export async function createAction(db: Db, box: SecretBox, projectId: string, input: ActionInput, urls: UrlPolicy): Promise<ActionRow> {
  const details = checkDefinition({ ...input, query: input.query ?? null, body: input.body ?? null });
  if (details.length) throw ValidationError(details);
  checkActionHost(input.url, urls);
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
    // The project was deleted since the route found it.
    throw projectGone(err);
  }
  return row;
}

/** Every action of the project, oldest first. */
export async function listActions(db: Db, projectId: string): Promise<ActionRow[]> {
  return db.selectFrom('actions').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

export async function getActionRow(db: Db, projectId: string, id: string): Promise<ActionRow> {
  const row = await db.selectFrom('actions').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Action not found');
  return row;
}

/** Applies a partial update; the merged definition is checked as a whole, like a create. */
/**
 * A URL given unchanged is not judged again: the demo's order look-up is this server's own loopback
 * endpoint (let through at call time), and the dashboard sends the URL with every edit.
 */
export async function updateAction(db: Db, box: SecretBox, projectId: string, id: string, patch: ActionPatch, urls: UrlPolicy): Promise<ActionRow> {
  const row = await getActionRow(db, projectId, id);
  const current = actionFields(row);
  const merged: Shape = {
    method: patch.method ?? current.method,
    url: patch.url ?? current.url,
    parameters: patch.parameters ?? current.parameters,
    query: patch.query === undefined ? current.query : patch.query,
    body: patch.body === undefined ? current.body : patch.body,
  };
  const details = checkDefinition(merged);
  if (details.length) throw ValidationError(details);
  if (patch.url !== undefined && patch.url !== row.url) checkActionHost(patch.url, urls);
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
  return { ...row, ...set };
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

/** The id of the project's action named `name`, if there is one. */
export async function findActionId(db: Db, projectId: string, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('actions').select('id').where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  return row?.id;
}
