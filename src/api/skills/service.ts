import type { Kysely, Selectable } from 'kysely';
import { NotFound } from '../../lib/errors.js';
import { newId, now } from '../../lib/ids.js';
import type { Database } from '../../store/index.js';
import type { SkillsTable } from '../../store/schema.js';
import type { CreateSkillInput, PatchSkillInput, Skill } from './schema.js';

type Db = Kysely<Database>;

export function toSkill(row: Selectable<SkillsTable>): Skill {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    instructions: row.instructions,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createSkill(db: Db, projectId: string, input: CreateSkillInput): Promise<Skill> {
  const at = now();
  const row: Selectable<SkillsTable> = {
    id: newId('skill'),
    project_id: projectId,
    name: input.name,
    description: input.description,
    instructions: input.instructions,
    enabled: input.enabled ? 1 : 0,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('skills').values(row).execute();
  return toSkill(row);
}

/** Every skill of the project, or only the enabled ones (what the widget and the agent offer). */
export async function listSkills(db: Db, projectId: string, options: { enabledOnly?: boolean } = {}): Promise<Skill[]> {
  let q = db.selectFrom('skills').selectAll().where('project_id', '=', projectId);
  if (options.enabledOnly) q = q.where('enabled', '=', 1);
  const rows = await q.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(toSkill);
}

export async function getSkill(db: Db, projectId: string, skillId: string): Promise<Skill> {
  const row = await db
    .selectFrom('skills')
    .selectAll()
    .where('id', '=', skillId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw NotFound('Skill not found');
  return toSkill(row);
}

export async function updateSkill(db: Db, projectId: string, skillId: string, patch: PatchSkillInput): Promise<Skill> {
  const changes: Partial<Selectable<SkillsTable>> = { updated_at: now() };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.instructions !== undefined) changes.instructions = patch.instructions;
  if (patch.enabled !== undefined) changes.enabled = patch.enabled ? 1 : 0;
  const res = await db
    .updateTable('skills')
    .set(changes)
    .where('id', '=', skillId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw NotFound('Skill not found');
  return getSkill(db, projectId, skillId);
}

export async function deleteSkill(db: Db, projectId: string, skillId: string): Promise<void> {
  const res = await db.deleteFrom('skills').where('id', '=', skillId).where('project_id', '=', projectId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw NotFound('Skill not found');
}
