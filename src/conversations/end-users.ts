import type { Kysely, Selectable } from 'kysely';
import { newId, now } from '../lib/ids.js';
import { isUniqueViolation, projectGone, type Database } from '../store/index.js';
import type { EndUsersTable } from '../store/schema.js';

type Db = Kysely<Database>;
export type EndUserRow = Selectable<EndUsersTable>;

export async function findEndUser(db: Db, projectId: string, externalId: string): Promise<EndUserRow | undefined> {
  return db
    .selectFrom('end_users')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

/**
 * Creates the end user or updates it. `email`/`name` overwrite only when given; `verified` stamps
 * `verified_at`. Safe under concurrent first calls for one user (a unique-key race is retried as an
 * update). 404 when the project was deleted since it was read.
 */
export async function upsertEndUser(
  db: Db,
  projectId: string,
  externalId: string,
  fields: { email?: string | null; name?: string | null; verified?: boolean } = {},
): Promise<EndUserRow> {
  const at = now();
  const existing = await findEndUser(db, projectId, externalId);
  if (!existing) {
    const row: EndUserRow = {
      id: newId('eu'),
      project_id: projectId,
      external_id: externalId,
      email: fields.email ?? null,
      name: fields.name ?? null,
      verified_at: fields.verified ? at : null,
      created_at: at,
      updated_at: at,
    };
    try {
      await db.insertInto('end_users').values(row).execute();
      return row;
    } catch (err) {
      if (!isUniqueViolation(err)) throw projectGone(err);
      return upsertEndUser(db, projectId, externalId, fields);
    }
  }
  const changes: Partial<EndUserRow> = {};
  if (fields.email !== undefined && fields.email !== existing.email) changes.email = fields.email;
  if (fields.name !== undefined && fields.name !== existing.name) changes.name = fields.name;
  if (fields.verified) changes.verified_at = at;
  if (Object.keys(changes).length === 0) return existing;
  changes.updated_at = at;
  await db.updateTable('end_users').set(changes).where('id', '=', existing.id).execute();
  return { ...existing, ...changes };
}
