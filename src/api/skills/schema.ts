import { z } from 'zod';
import { projectParams } from '../projects/admin-schema.js';

const name = z.string().trim().min(1).max(100).describe('Short name shown to end users in the widget, e.g. "Track an order".');
const description = z.string().trim().max(1000).describe('One or two sentences shown beside the name in the widget.');
const instructions = z
  .string()
  .max(20_000)
  .describe('How the agent should carry out this workflow; added to its system prompt while the skill is enabled.');
const enabled = z.boolean().describe('Only enabled skills are offered (widget `availableSkills` and the agent prompt).');

/** A skill: a named workflow the agent offers and follows. */
export const skillSchema = z
  .object({
    id: z.string().describe('`skill_…`'),
    projectId: z.string(),
    name: z.string(),
    description: z.string(),
    instructions: z.string(),
    enabled: z.boolean(),
    createdAt: z.string().describe('ISO 8601 UTC'),
    updatedAt: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'AdminSkill', description: 'A skill with its instructions, as admins see it (the widget sees `Skill`).' });
export type Skill = z.infer<typeof skillSchema>;

export const createSkillBody = z
  .object({
    name,
    description: description.default(''),
    instructions: instructions.default(''),
    enabled: enabled.default(true),
  })
  .strict()
  .meta({ id: 'CreateSkillRequest', description: 'A new skill; `enabled` defaults to true.' });
export type CreateSkillInput = z.infer<typeof createSkillBody>;

export const patchSkillBody = z
  .object({ name, description, instructions, enabled })
  .partial()
  .strict()
  .meta({ id: 'UpdateSkillRequest', description: 'Fields to change.' });
export type PatchSkillInput = z.infer<typeof patchSkillBody>;

export const skillParams = projectParams.extend({
  skillId: z.string().min(1).max(64).describe('Skill id (`skill_…`).'),
});

export const skillWrapped = z.object({ skill: skillSchema }).meta({ id: 'SkillResponse', description: 'A skill.' });
export const skillList = z
  .object({ skills: z.array(skillSchema).describe('Oldest first.') })
  .meta({ id: 'SkillList', description: "A project's skills." });
