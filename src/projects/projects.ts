import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { generateHmacSecret } from '../lib/keys.js';
import type { SecretSealer } from '../lib/secret-box.js';
import { isUniqueViolation, type Database } from '../store/index.js';
import { keepingRows, lockRow } from '../store/lock.js';
import type { ProjectsTable } from '../store/schema.js';
import { sealHmacSecret } from './hmac-secret.js';
import { createKey } from './keys.js';
import { projectSettingsSchema, toProject, type Project, type ProjectSettings, type ProjectSettingsChange } from './project.js';

type Db = Kysely<Database>;

export interface CreatedProject {
  project: Project;
  publicKey: string;
  secretKey: string;
  hmacSecret: string;
}

/**
 * Creates a project with one public key, one secret key and an HMAC secret (stored sealed with
 * `box`), in one transaction. The keys and the secret are returned this once.
 */
export async function createProject(db: Db, box: SecretSealer, input: { name: string; settings?: ProjectSettings }): Promise<CreatedProject> {
  return insertProject(db, box, input, 0);
}

/**
 * Creates the demo project as createProject does, or returns null when the database already holds
 * one: nodes started together on an empty database each try, and the unique index
 * `projects_one_demo` lets only the first insert through.
 */
export async function createDemoProject(
  db: Db,
  box: SecretSealer,
  input: { name: string; settings?: ProjectSettings },
): Promise<CreatedProject | null> {
  try {
    return await insertProject(db, box, input, 1);
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}

async function insertProject(db: Db, box: SecretSealer, input: { name: string; settings?: ProjectSettings }, demo: 0 | 1): Promise<CreatedProject> {
  const at = now();
  const id = newId('proj');
  const hmacSecret = generateHmacSecret();
  const row = {
    id,
    name: input.name,
    settings: JSON.stringify(input.settings ?? {}),
    hmac_secret: sealHmacSecret(box, id, hmacSecret),
    demo,
    created_at: at,
    updated_at: at,
  };
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('projects').values(row).execute();
    const pub = await createKey(trx, row.id, { kind: 'public', name: 'Default public key' });
    const sec = await createKey(trx, row.id, { kind: 'secret', name: 'Default secret key' });
    return { project: toProject(row), publicKey: pub.secret, secretKey: sec.secret, hmacSecret };
  });
}

/** Every project, oldest first, or only `onlyId`. */
export async function listProjects(db: Db, onlyId?: string): Promise<Project[]> {
  let q = db.selectFrom('projects').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc');
  if (onlyId) q = q.where('id', '=', onlyId);
  return (await q.execute()).map(toProject);
}

async function getProjectRow(db: Db, id: string): Promise<Selectable<ProjectsTable>> {
  const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw NotFound('Project not found');
  return row;
}

export async function getProject(db: Db, id: string): Promise<Project> {
  return toProject(await getProjectRow(db, id));
}

/** Whether a project with this id exists. */
export async function projectExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('projects').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * Which of `ids` name projects, kept from being deleted until the transaction `trx` ends: for a
 * transaction that goes on to write rows referencing them. A delete under way is waited for, and its
 * project not returned, rather than the rows' foreign key failing later (keepingRows).
 */
export async function keepExistingProjects(trx: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`select id from projects where id in (${sql.join(ids)})${keepingRows(trx)}`.execute(trx);
  return new Set(rows.map((r) => r.id));
}

/**
 * Renames and/or merges settings one level deep: `{widget: {primaryColor}}` keeps other widget
 * fields, and a key set to null is removed, so its default applies again.
 */
export async function updateProject(
  db: Db,
  id: string,
  patch: { name?: string; settings?: ProjectSettingsChange },
): Promise<Project> {
  return db.transaction().execute(async (trx) => {
    // Read under the row's lock: two patches at once merge one after the other, neither is lost.
    if (!(await lockRow(trx, 'projects', id))) throw NotFound('Project not found');
    const current = toProject(await getProjectRow(trx, id));
    const settings: Record<string, unknown> = { ...current.settings };
    for (const [key, value] of Object.entries(patch.settings ?? {})) {
      if (value === null) {
        delete settings[key];
        continue;
      }
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

/** Replaces the project's HMAC secret with a new one, stored sealed with `box`; the new secret is returned this once. */
export async function rotateHmacSecret(db: Db, box: SecretSealer, id: string): Promise<string> {
  const secret = generateHmacSecret();
  const res = await db
    .updateTable('projects')
    .set({ hmac_secret: sealHmacSecret(box, id, secret), updated_at: now() })
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw NotFound('Project not found');
  return secret;
}
