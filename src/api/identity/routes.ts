import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { upsertEndUser } from '../../conversations/end-users.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { HttpError, isNotFound, Unauthorized } from '../../lib/errors.js';
import { verifyUserHmac } from '../../lib/keys.js';
import { errorSchema } from '../../http/error-schemas.js';
import { identified, identifyBody, identityFailure, verified, verifyBody } from './schema.js';
import type { Database } from '../../store/index.js';
import { verifyIdentityToken } from './verify.js';

const invalid = (message: string) => new HttpError(401, message, { verified: false });

/**
 * Upserts the proven end user. A project deleted since its key was read (404 from the store) answers
 * as its key now does: 401 `Unauthorized`, the answer the same request sent a moment later gets.
 */
async function saveVerified(db: Kysely<Database>, projectId: string, externalId: string, fields: { email?: string | null; name?: string | null }) {
  return upsertEndUser(db, projectId, externalId, { ...fields, verified: true }).catch((err: unknown) => {
    throw isNotFound(err) ? Unauthorized() : err;
  });
}

/**
 * Identity verification: an end user proven by an HMAC over its id (POST /identity/verify) or by
 * an HS256 JWT (POST /identity/identify) is upserted with `verified_at`. Error bodies carry
 * `verified: false` (route config `identityErrors`).
 */
export const identityRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${API_PREFIX}/identity/verify`, {
    config: { auth: 'runtime', identityErrors: true },
    schema: {
      tags: ['identity'],
      operationId: 'verifyIdentity',
      summary: 'Verify an end user by HMAC',
      description:
        'Checks `hmac` = hex HMAC-SHA256 of `userId` with the project HMAC secret (constant time, either case) and upserts the end user as verified, with `email` and `name`.',
      body: verifyBody,
      response: {
        200: verified,
        400: identityFailure.describe('The body does not match the schema or is not JSON: `{"verified":false,"error":"Validation error"}`.'),
        401: identityFailure
          .or(errorSchema)
          .describe('Wrong signature (`{"verified":false,"error":"Invalid HMAC signature"}`), or no valid key (`{"error":"Unauthorized"}`).'),
      },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const { userId, hmac, email, name } = request.body;
      if (!verifyUserHmac(owner.hmacSecret(), userId, hmac.trim())) throw invalid('Invalid HMAC signature');
      await saveVerified(db, owner.project.id, userId, { email, name });
      return { verified: true as const };
    },
  });

  app.post(`${API_PREFIX}/identity/identify`, {
    config: { auth: 'runtime', identityErrors: true },
    schema: {
      tags: ['identity'],
      operationId: 'identifyUser',
      summary: 'Identify an end user by JWT',
      description:
        'Verifies an HS256 JWT signed with the project HMAC secret (`sub` and `exp` required; `exp`/`nbf`/`iat` checked with 30 s tolerance) and upserts the end user as verified from its claims.',
      body: identifyBody,
      response: {
        200: identified,
        400: identityFailure.describe('The body does not match the schema or is not JSON: `{"verified":false,"error":"Validation error"}`.'),
        401: identityFailure
          .or(errorSchema)
          .describe('Bad signature, other algorithm, expired, or no `sub` (`{"verified":false,"error":"Invalid identity token"}`), or no valid key (`{"error":"Unauthorized"}`).'),
      },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const claims = await verifyIdentityToken(owner.hmacSecret(), request.body.token.trim());
      if (!claims) throw invalid('Invalid identity token');
      const user = await saveVerified(db, owner.project.id, claims.sub, { email: claims.email, name: claims.name });
      return {
        verified: true as const,
        user: {
          id: user.external_id,
          ...(user.email !== null ? { email: user.email } : {}),
          ...(user.name !== null ? { name: user.name } : {}),
        },
      };
    },
  });
};
