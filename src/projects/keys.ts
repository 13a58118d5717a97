import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { displayPrefix, generateApiKey, hashKey, type KeyKind } from '../lib/keys.js';
import type { SecretSealer } from '../lib/secret-box.js';
import { projectGone, type Database } from '../store/index.js';
import type { ApiKeysTable, ProjectsTable } from '../store/schema.js';
import { openHmacSecret } from './hmac-secret.js';
import { toProject, type Project } from './project.js';

type Db = Kysely<Database>;
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** Creates a key; the full key is in `secret` and is never readable again. */
export async function createKey(
  db: Db,
  projectId: string,
  input: { kind: KeyKind; name?: string },
): Promise<{ row: ApiKeyRow; secret: string }> {
  const secret = generateApiKey(input.kind);
  const row: ApiKeyRow = {
    id: newId('key'),
    project_id: projectId,
    kind: input.kind,
    name: input.name ?? null,
    prefix: displayPrefix(secret),
    hash: hashKey(secret),
    created_at: now(),
    last_used_at: null,
    revoked_at: null,
  };
  await db.insertInto('api_keys').values(row).execute().catch((err: unknown) => {
    // The project was deleted since the route found it.
    throw projectGone(err);
  });
  return { row, secret };
}

/** Every key of the project, revoked ones included, oldest first. */
export async function listKeys(db: Db, projectId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/**
 * Revokes a key of the project; revoking twice returns the key as first revoked. One conditional
 * statement: of two revokes at once, the second keeps the first one's time rather than overwrite it.
 */
export async function revokeKey(db: Db, projectId: string, keyId: string): Promise<ApiKeyRow> {
  await db.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', keyId).where('project_id', '=', projectId).where('revoked_at', 'is', null).execute();
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw NotFound('Key not found');
  return row;
}

/** The project a presented key belongs to, with what the auth layer needs of the key. */
export interface KeyOwner {
  keyId: string;
  kind: KeyKind;
  project: Project;
  /**
   * The project's HMAC secret, opened when first asked for (identity checks only, so a node with the
   * wrong ANSWERDESK_SECRET_KEY fails those with SecretKeyError and serves everything else).
   */
  hmacSecret(): string;
  /** When the key was last recorded as used, in epoch ms (compared on every call; null: never). */
  lastUsedMs: number | null;
}

type KeyOwnerRow = Selectable<ProjectsTable> &
  Pick<Selectable<ApiKeysTable>, 'kind' | 'revoked_at' | 'last_used_at'> & { key_id: string };

/**
 * Looks a presented key up by its hash; revoked keys and unknown keys give null. This runs on every
 * API call, so it is written as SQL text: building and compiling it with the query builder each time
 * cost more than running it. `box` opens the project's sealed HMAC secret when it is asked for.
 */
export async function findKeyOwner(db: Db, box: SecretSealer, key: string): Promise<KeyOwner | null> {
  const { rows } = await sql<KeyOwnerRow>`
    select k.id as key_id, k.kind, k.revoked_at, k.last_used_at,
           p.id, p.name, p.settings, p.hmac_secret, p.created_at, p.updated_at
    from api_keys k join projects p on p.id = k.project_id
    where k.hash = ${hashKey(key)}`.execute(db);
  const row = rows[0];
  if (!row || row.revoked_at) return null;
  const stored = row.hmac_secret;
  let opened: string | undefined;
  return {
    keyId: row.key_id,
    kind: row.kind,
    project: toProject(row),
    hmacSecret: () => (opened ??= openHmacSecret(box, row.id, stored)),
    lastUsedMs: row.last_used_at === null ? null : Date.parse(row.last_used_at),
  };
}

/**
 * Records use of a key at most once a minute, so busy keys do not write on every request. Runs on
 * every API call: when there is nothing to write it returns null rather than a promise.
 */
export function touchKey(db: Db, owner: KeyOwner): Promise<void> | null {
  const at = Date.now();
  if (owner.lastUsedMs !== null && at - owner.lastUsedMs < 60_000) return null;
  // The owner may be a cached object shared by later requests: remember the write on it too.
  owner.lastUsedMs = at;
  return db
    .updateTable('api_keys')
    .set({ last_used_at: new Date(at).toISOString() })
    .where('id', '=', owner.keyId)
    .execute()
    .then(() => undefined);
}
