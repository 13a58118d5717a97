import { z } from 'zod';
import { apiKeySchema, projectSchema } from './schema.js';

/** Error body of every admin route: the same `{error}` shape as the runtime API. */
export const adminError = z.object({ error: z.string().describe('What went wrong.') }).describe('Error');
export const adminValidationError = z
  .object({
    error: z.literal('Validation error'),
    details: z.array(z.object({ path: z.string(), message: z.string() })).describe('One item per invalid field.'),
  })
  .describe('ValidationError');

/** Error responses shared by every project-scoped admin route. */
export const adminErrors = {
  400: adminValidationError,
  401: adminError.describe('Missing or invalid admin token or secret key (public keys included).'),
  404: adminError.describe('Unknown id, or a resource of another project.'),
  429: adminError.describe('Rate limit exceeded (admin bucket: 600 requests per minute per credential).'),
} as const;

export const projectParams = z.object({
  projectId: z.string().min(1).max(64).describe('Project id (`proj_…`).'),
});

export const keyParams = projectParams.extend({
  keyId: z.string().min(1).max(64).describe('Key id (`key_…`).'),
});

export const projectCreated = z
  .object({
    project: projectSchema,
    publicKey: z.string().describe('The default public key (`ad_pk_…`), shown only now.'),
    secretKey: z.string().describe('The default secret key (`ad_sk_…`), shown only now.'),
    hmacSecret: z.string().describe('The HMAC secret (`ad_hs_…`) that signs end-user identities.'),
  })
  .describe('ProjectCreated');

export const projectWrapped = z.object({ project: projectSchema }).describe('ProjectResponse');
export const projectList = z.object({ projects: z.array(projectSchema).describe('Oldest first.') }).describe('ProjectList');

export const keyCreated = z
  .object({
    key: apiKeySchema,
    secret: z.string().describe('The full key, shown only now; only its hash is stored.'),
  })
  .describe('KeyCreated');
export const keyWrapped = z.object({ key: apiKeySchema }).describe('KeyResponse');
export const keyList = z
  .object({ keys: z.array(apiKeySchema).describe('Every key of the project, revoked ones included, oldest first.') })
  .describe('KeyList');

export const hmacRotated = z
  .object({ hmacSecret: z.string().describe('The new HMAC secret; signatures made with the old one stop verifying at once.') })
  .describe('HmacSecretRotated');
