import { z } from 'zod';
import { errorSchema, validationErrorSchema } from '../../http/error-schemas.js';
import { apiKeySchema, projectSchema } from './schema.js';

/** Error body of every admin route: the same `{error}` shape as the runtime API. */
export const adminError = errorSchema;
export const adminValidationError = validationErrorSchema;

/**
 * Error responses of every project-scoped admin route, beyond those the HTTP layer adds to every
 * admin operation (400 validation, 401, 429, 500: see http/openapi.ts).
 */
export const adminErrors = {
  404: adminError.describe('Unknown id, or a resource of another project (`Project not found`, or the resource’s own “not found”).'),
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
  .meta({ id: 'ProjectCreated', description: 'The new project and its credentials, shown only in this response.' });

export const projectWrapped = z.object({ project: projectSchema }).meta({ id: 'ProjectResponse', description: 'A project.' });
export const projectList = z
  .object({ projects: z.array(projectSchema).describe('Oldest first.') })
  .meta({ id: 'ProjectList', description: 'The projects the caller may administer.' });

export const keyCreated = z
  .object({
    key: apiKeySchema,
    secret: z.string().describe('The full key, shown only now; only its hash is stored.'),
  })
  .meta({ id: 'KeyCreated', description: 'The new key; `secret` is shown only in this response.' });
export const keyWrapped = z.object({ key: apiKeySchema }).meta({ id: 'KeyResponse', description: 'An API key.' });
export const keyList = z
  .object({ keys: z.array(apiKeySchema).describe('Every key of the project, revoked ones included, oldest first.') })
  .meta({ id: 'KeyList', description: "A project's API keys." });

export const hmacRotated = z
  .object({ hmacSecret: z.string().describe('The new HMAC secret; signatures made with the old one stop verifying at once.') })
  .meta({ id: 'HmacSecretRotated', description: 'The new HMAC secret.' });
