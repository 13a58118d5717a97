import type { Kysely } from 'kysely';
import { deleteProjectJobs } from '../../knowledge/job-store.js';
import type { KeyKind } from '../../lib/keys.js';
import { createKey, listKeys, revokeKey, type ApiKeyRow } from '../../projects/keys.js';
import { deleteProject } from '../../projects/projects.js';
import { retryDeadlock, type Database } from '../../store/index.js';
import type { ApiKey } from './schema.js';

type Db = Kysely<Database>;

/** A key as the admin API shows it: never its hash. */
export function toApiKey(row: ApiKeyRow): ApiKey {
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

/** Creates a key of the project; the full key is in `secret`, shown this once. */
export async function createApiKey(db: Db, projectId: string, input: { kind: KeyKind; name?: string }): Promise<{ key: ApiKey; secret: string }> {
  const { row, secret } = await createKey(db, projectId, input);
  return { key: toApiKey(row), secret };
}

export async function listApiKeys(db: Db, projectId: string): Promise<ApiKey[]> {
  return (await listKeys(db, projectId)).map(toApiKey);
}

export async function revokeApiKey(db: Db, projectId: string, keyId: string): Promise<ApiKey> {
  return toApiKey(await revokeKey(db, projectId, keyId));
}

/**
 * Deletes a project and everything in it, atomically. Its knowledge jobs go first: a worker claiming
 * one locks the job's row and then its source's, and the project's cascade (project → sources →
 * jobs) would take them the other way round (on PostgreSQL, a deadlock and a 500 for the delete).
 */
export async function removeProject(db: Db, projectId: string): Promise<void> {
  // Rows added to the project meanwhile (a message, its event) lock the project's row after their
  // parent's, the cascade the other way round: on PostgreSQL one of the two can be a deadlock's
  // victim, and runs again.
  await retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      await deleteProjectJobs(trx, projectId);
      await deleteProject(trx, projectId);
    }),
  );
}
