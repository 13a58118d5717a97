import { sql, type Kysely, type Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { projectGone, type Database } from '../store/index.js';
import type { SkillsTable } from '../store/schema.js';

type Db = Kysely<Database>;
export type SkillRow = Selectable<SkillsTable>;

/** What a skill is made of, as given when it is created or changed. */
export interface SkillFields {
  name: string;
  description: string;
  instructions: string;
  enabled: boolean;
}

export async function createSkill(db: Db, projectId: string, input: SkillFields): Promise<SkillRow> {
  const at = now();
  const row: SkillRow = {
    id: newId('skill'),
    project_id: projectId,
    name: input.name,
    description: input.description,
    instructions: input.instructions,
    enabled: input.enabled ? 1 : 0,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('skills').values(row).execute().catch((err: unknown) => {
    // The project was deleted since the route found it.
    throw projectGone(err);
  });
  return row;
}

/** Every skill of the project, in creation order. */
export async function listSkills(db: Db, projectId: string): Promise<SkillRow[]> {
  return db.selectFrom('skills').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

export type EnabledSkill = Pick<SkillRow, 'id' | 'name' | 'description' | 'instructions'>;

/**
 * The project's enabled skills in creation order: what the agent follows and the widget lists. SQL
 * text rather than the query builder: it runs on every widget load, and building plus compiling
 * cost more than the query.
 */
export async function listEnabledSkills(db: Db, projectId: string): Promise<EnabledSkill[]> {
  const { rows } = await sql<EnabledSkill>`
    select id, name, description, instructions from skills
    where project_id = ${projectId} and enabled = 1
    order by created_at asc, id asc`.execute(db);
  return rows;
}

export async function getSkill(db: Db, projectId: string, skillId: string): Promise<SkillRow> {
  const row = await db.selectFrom('skills').selectAll().where('id', '=', skillId).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Skill not found');
  return row;
}

export async function updateSkill(db: Db, projectId: string, skillId: string, patch: Partial<SkillFields>): Promise<SkillRow> {
  const changes: Partial<SkillRow> = { updated_at: now() };
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
