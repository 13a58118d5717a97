import { z } from 'zod';
import { externalUserId } from '../conversations/schema.js';

export const verifyBody = z
  .object({
    userId: externalUserId.describe('Your id of the end user: the exact string that was signed.'),
    hmac: z.string().min(1).max(256).describe('Hex HMAC-SHA256 of userId with the project HMAC secret (either case).'),
    email: z.email().max(256).optional().describe('Stored on the end user.'),
    name: z.string().max(256).optional().describe('Stored on the end user.'),
  })
  .meta({ id: 'VerifyIdentityRequest', description: 'An end-user id and its signature, made by your server.' });

export const identifyBody = z
  .object({
    token: z
      .string()
      .min(1)
      .max(8192)
      .describe('HS256 JWT signed with the project HMAC secret: `sub` = your user id; optional `email`, `name`, `exp`, `nbf`.'),
  })
  .meta({ id: 'IdentifyRequest', description: 'A JWT made by your server.' });

/** Failure bodies of the identity routes: `verified: false` beside the error (the spec's shape). */
export const identityFailure = z
  .object({ verified: z.literal(false), error: z.string() })
  .meta({ id: 'IdentityFailure', description: 'A refused identity: `verified: false` and why.' });

export const verified = z.object({ verified: z.literal(true) }).meta({ id: 'IdentityVerified', description: 'The signature is right; the end user is stored as verified.' });

export const identified = z
  .object({
    verified: z.literal(true),
    user: z.object({
      id: z.string().describe('The token `sub`: your id of the end user.'),
      email: z.string().optional(),
      name: z.string().optional(),
    }),
  })
  .meta({ id: 'IdentityIdentified', description: 'The token is valid; the end user is stored as verified from its claims.' });
