import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { HttpError } from '../../lib/errors.js';
import { verifyUserHmac } from '../../lib/keys.js';
import { upsertEndUser } from '../end-users/service.js';
import { identified, identifyBody, identityError, identityFailure, verified, verifyBody } from './schema.js';
import { verifyIdentityToken } from './verify.js';

const invalid = (message: string) => new HttpError(401, message, { verified: false });

/**
 * Identity verification: an end user proven by an HMAC over its id (POST /identity/verify) or by
 * an HS256 JWT (POST /identity/identify) is upserted with `verified_at`. Error bodies carry
 * `verified: false` (route config `identityErrors`).
 */
export const identityRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${API_PREFIX}/identity/verify`, {
    config: { identityErrors: true },
    schema: {
      tags: ['identity'],
      summary: 'Verify an end user by HMAC',
      body: verifyBody,
      response: { 200: verified, 400: identityFailure, 401: identityFailure.or(identityError), 429: identityError },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const { userId, hmac, email, name } = request.body;
      if (!verifyUserHmac(owner.hmacSecret, userId, hmac.trim())) throw invalid('Invalid HMAC signature');
      await upsertEndUser(db, owner.project.id, userId, { email, name, verified: true });
      return { verified: true as const };
    },
  });

  app.post(`${API_PREFIX}/identity/identify`, {
    config: { identityErrors: true },
    schema: {
      tags: ['identity'],
      summary: 'Identify an end user by JWT',
      body: identifyBody,
      response: { 200: identified, 400: identityFailure, 401: identityFailure.or(identityError), 429: identityError },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const claims = await verifyIdentityToken(owner.hmacSecret, request.body.token.trim());
      if (!claims) throw invalid('Invalid identity token');
      const user = await upsertEndUser(db, owner.project.id, claims.sub, {
        email: claims.email,
        name: claims.name,
        verified: true,
      });
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
