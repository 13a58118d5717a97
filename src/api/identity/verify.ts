import type { FastifyRequest } from 'fastify';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import { Unauthorized } from '../../lib/errors.js';
import { verifyUserHmac } from '../../lib/keys.js';
import { unstorablePaths } from '../../lib/nul.js';
import type { KeyOwner } from '../../projects/keys.js';

export interface IdentityClaims {
  sub: string;
  email?: string;
  name?: string;
}

/** Clock skew allowed between the customer's server and ours, for `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_S = 30;

/**
 * Verifies an HS256 JWT signed with the project's HMAC secret. Any other `alg` is refused; `sub`
 * and `exp` are required (a token without `exp` would prove the identity forever); `exp`, `nbf` and
 * an `iat` in the future are checked with 30 s of clock tolerance; `sub`, `email` and `name` may not
 * hold U+0000 or an unpaired surrogate; an `email` that is no e-mail address is left out. Returns
 * null when invalid.
 */
export async function verifyIdentityToken(secret: string, token: string): Promise<IdentityClaims | null> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
      clockTolerance: CLOCK_TOLERANCE_S,
    }));
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
  // jose checks `iat` only together with a maximum token age, which would make `iat` required; a
  // token issued in the future is refused without demanding `iat` (jose has checked it is a number).
  if (payload.iat !== undefined && payload.iat > Date.now() / 1000 + CLOCK_TOLERANCE_S) return null;
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 256) return null;
  const str = (v: unknown) => (typeof v === 'string' && v.length <= 256 ? v : undefined);
  const claims = { sub: payload.sub, email: str(payload.email), name: str(payload.name) };
  // Claims are input like any other: U+0000 (which PostgreSQL cannot store) and half of a surrogate
  // pair (stored differently by each database) make the token invalid.
  const unstorable = unstorablePaths(claims);
  if (unstorable.nul.length > 0 || unstorable.loneSurrogate.length > 0) return null;
  // An `email` claim that is no e-mail address is not stored, as /identity/verify refuses one; the
  // signed `sub` still identifies the user.
  return { ...claims, email: claims.email !== undefined && isEmail(claims.email) ? claims.email : undefined };
}

/**
 * Whether this request proves it speaks for end user `externalId`: an `x-user-hmac` over the id, or
 * an `x-user-token` JWT whose `sub` is the id.
 */
export async function requestProvesIdentity(request: FastifyRequest, owner: KeyOwner, externalId: string): Promise<boolean> {
  const hmac = request.headers['x-user-hmac'];
  if (typeof hmac === 'string' && verifyUserHmac(owner.hmacSecret(), externalId, hmac.trim())) return true;
  const token = request.headers['x-user-token'];
  if (typeof token === 'string' && token) {
    const claims = await verifyIdentityToken(owner.hmacSecret(), token.trim());
    if (claims?.sub === externalId) return true;
  }
  return false;
}

/**
 * Enforces the project's `identityVerification: "required"` mode for a call that names or touches
 * end user `externalId` (null: an anonymous conversation, which that mode refuses). Returns whether
 * the identity was proven, which also matters in optional mode (the agent trusts verified ids only).
 */
export async function checkIdentity(request: FastifyRequest, owner: KeyOwner, externalId: string | null): Promise<boolean> {
  const proven = externalId !== null && (await requestProvesIdentity(request, owner, externalId));
  if (!proven && owner.project.settings.identityVerification === 'required') {
    throw Unauthorized('Identity verification required');
  }
  return proven;
}

const emailSchema = z.email();
const isEmail = (value: string) => emailSchema.safeParse(value).success;
