import { z } from 'zod';
import { projectSettingsPatchSchema, projectSettingsSchema } from '../../projects/project.js';

export const projectSchema = z
  .object({
    id: z.string().describe('`proj_…`'),
    name: z.string(),
    settings: projectSettingsSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Project', description: 'A project: one agent, its keys, knowledge, actions and skills.' });

export const apiKeySchema = z
  .object({
    id: z.string().describe('`key_…`'),
    projectId: z.string(),
    kind: z.enum(['public', 'secret']),
    name: z.string().nullable(),
    prefix: z.string().describe('Start and end of the key, for telling keys apart; the key itself is shown once.'),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKey', description: 'An API key, without its secret part.' });
export type ApiKey = z.infer<typeof apiKeySchema>;

export const createProjectBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    settings: projectSettingsSchema.optional(),
  })
  .strict()
  .meta({ id: 'CreateProjectRequest', description: 'The project name and optional settings.' });

export const patchProjectBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    settings: projectSettingsPatchSchema.optional(),
  })
  .strict()
  .meta({ id: 'UpdateProjectRequest', description: 'Fields to change; `settings` merges one level deep, and a setting set to null is removed (back to its default).' });

export const createKeyBody = z
  .object({
    kind: z.enum(['public', 'secret']).default('public'),
    name: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'CreateKeyRequest', description: 'Optional; `kind` defaults to "public".' });
