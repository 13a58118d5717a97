import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../../lib/errors.js';
import { newId, now } from '../../lib/ids.js';
import { displayPrefix, generateApiKey, generateHmacSecret, hashKey, type KeyKind } from '../../lib/keys.js';
import type { Database } from '../../store/index.js';
import type { ApiKeysTable, ProjectsTable } from '../../store/schema.js';
import { projectSettingsSchema, type ApiKey, type Project, type ProjectSettings } from './schema.js';

type Db = Kysely<Database>;

export function toProject(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    name: row.name,
    settings: parseSettings(row.settings),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Stored settings are validated on write; a row edited by hand falls back to defaults, never crashes. */
function parseSettings(json: string): ProjectSettings {
  const parsed = projectSettingsSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : {};
}

export function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    projectId: row.project_id,
    kind: row.kind,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export interface CreatedProject {
  project: Project;
  publicKey: string;
  secretKey: string;
  hmacSecret: string;
}

/** Creates a project with one public key, one secret key and an HMAC secret, in one transaction. */
export async function createProject(db: Db, input: { name: string; settings?: ProjectSettings }): Promise<CreatedProject> {
  const at = now();
  const row = {
    id: newId('proj'),
    name: input.name,
    settings: JSON.stringify(input.settings ?? {}),
    hmac_secret: generateHmacSecret(),
    created_at: at,
    updated_at: at,
  };
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('projects').values(row).execute();
    const pub = await createKey(trx, row.id, { kind: 'public', name: 'Default public key' });
    const sec = await createKey(trx, row.id, { kind: 'secret', name: 'Default secret key' });
    return { project: toProject(row), publicKey: pub.secret, secretKey: sec.secret, hmacSecret: row.hmac_secret };
  });
}

export async function listProjects(db: Db, onlyId?: string): Promise<Project[]> {
  let q = db.selectFrom('projects').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc');
  if (onlyId) q = q.where('id', '=', onlyId);
  return (await q.execute()).map(toProject);
}

export async function getProjectRow(db: Db, id: string): Promise<Selectable<ProjectsTable>> {
  const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw NotFound('Project not found');
  return row;
}

export async function getProject(db: Db, id: string): Promise<Project> {
  return toProject(await getProjectRow(db, id));
}

/** Renames and/or merges settings one level deep: `{widget: {primaryColor}}` keeps other widget fields. */
export async function updateProject(
  db: Db,
  id: string,
  patch: { name?: string; settings?: ProjectSettings },
): Promise<Project> {
  return db.transaction().execute(async (trx) => {
    const current = toProject(await getProjectRow(trx, id));
    const settings: Record<string, unknown> = { ...current.settings };
    for (const [key, value] of Object.entries(patch.settings ?? {})) {
      const prev = settings[key];
      settings[key] =
        value && typeof value === 'object' && !Array.isArray(value) && prev && typeof prev === 'object' && !Array.isArray(prev)
          ? { ...prev, ...value }
          : value;
    }
    const merged = projectSettingsSchema.parse(settings);
    const updated = {
      name: patch.name ?? current.name,
      settings: JSON.stringify(merged),
      updated_at: now(),
    };
    await trx.updateTable('projects').set(updated).where('id', '=', id).execute();
    return { ...current, name: updated.name, settings: merged, updatedAt: updated.updated_at };
  });
}

export async function deleteProject(db: Db, id: string): Promise<void> {
  const res = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw NotFound('Project not found');
}

export async function rotateHmacSecret(db: Db, id: string): Promise<string> {
  const secret = generateHmacSecret();
  const res = await db
    .updateTable('projects')
    .set({ hmac_secret: secret, updated_at: now() })
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw NotFound('Project not found');
  return secret;
}

/** Creates a key; the full key is in `secret` and is never readable again. */
export async function createKey(
  db: Db,
  projectId: string,
  input: { kind: KeyKind; name?: string },
): Promise<{ key: ApiKey; secret: string }> {
  const secret = generateApiKey(input.kind);
  const row = {
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
  await db.insertInto('api_keys').values(row).execute();
  return { key: toApiKey(row), secret };
}

export async function listKeys(db: Db, projectId: string): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toApiKey);
}

export async function revokeKey(db: Db, projectId: string, keyId: string): Promise<ApiKey> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw NotFound('Key not found');
  if (row.revoked_at) return toApiKey(row);
  const revokedAt = now();
  await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('id', '=', keyId).execute();
  return toApiKey({ ...row, revoked_at: revokedAt });
}

export interface KeyOwner {
  keyId: string;
  kind: KeyKind;
  project: Project;
  hmacSecret: string;
  lastUsedAt: string | null;
}

type KeyOwnerRow = Selectable<ProjectsTable> &
  Pick<Selectable<ApiKeysTable>, 'kind' | 'revoked_at' | 'last_used_at'> & { key_id: string };

/**
 * Looks a presented key up by its hash; revoked keys and unknown keys give null. This runs on every
 * API call, so it is written as SQL text: building and compiling it with the query builder each time
 * cost more than running it.
 */
export async function findKeyOwner(db: Db, key: string): Promise<KeyOwner | null> {
  const { rows } = await sql<KeyOwnerRow>`
    select k.id as key_id, k.kind, k.revoked_at, k.last_used_at,
           p.id, p.name, p.settings, p.hmac_secret, p.created_at, p.updated_at
    from api_keys k join projects p on p.id = k.project_id
    where k.hash = ${hashKey(key)}`.execute(db);
  const row = rows[0];
  if (!row || row.revoked_at) return null;
  return {
    keyId: row.key_id,
    kind: row.kind,
    project: toProject(row),
    hmacSecret: row.hmac_secret,
    lastUsedAt: row.last_used_at,
  };
}

/** Records use of a key at most once a minute, so busy keys do not write on every request. */
export async function touchKey(db: Db, owner: KeyOwner): Promise<void> {
  if (owner.lastUsedAt && Date.now() - Date.parse(owner.lastUsedAt) < 60_000) return;
  const at = now();
  // The owner may be a cached object shared by later requests: remember the write on it too.
  owner.lastUsedAt = at;
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', owner.keyId).execute();
}
