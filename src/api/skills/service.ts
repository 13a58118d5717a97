import type { Kysely } from 'kysely';
import * as skills from '../../skills/skills.js';
import type { Database } from '../../store/index.js';
import type { CreateSkillInput, PatchSkillInput, Skill } from './schema.js';

type Db = Kysely<Database>;

export function toSkill(row: skills.SkillRow): Skill {
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
  return toSkill(await skills.createSkill(db, projectId, input));
}

export async function listSkills(db: Db, projectId: string): Promise<Skill[]> {
  return (await skills.listSkills(db, projectId)).map(toSkill);
}

export async function getSkill(db: Db, projectId: string, skillId: string): Promise<Skill> {
  return toSkill(await skills.getSkill(db, projectId, skillId));
}

export async function updateSkill(db: Db, projectId: string, skillId: string, patch: PatchSkillInput): Promise<Skill> {
  return toSkill(await skills.updateSkill(db, projectId, skillId, patch));
}
