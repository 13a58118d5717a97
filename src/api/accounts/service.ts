import type { FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../accounts/sessions.js';
import { checkPassword, normalizeEmail, passwordMatches, setPassword } from '../../accounts/users.js';
import type { Invite } from '../../accounts/invites.js';
import type { User, UserWithMemberships } from '../../accounts/types.js';
import { clientAddress, proxyTrust } from '../../http/client-address.js';
import { hashKey } from '../../lib/keys.js';
import { BadRequest, isNotFound, TooManyRequests, Unauthorized } from '../../lib/errors.js';
import type { z } from 'zod';
import type { adminUserSchema, inviteSchema, userSchema } from './schema.js';

/** Failed sign-ins allowed per e-mail and per address in LOGIN_WINDOW_SECONDS; the next attempt answers 429. */
export const LOGIN_FAILURES = 10;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

export const INVALID_LOGIN = 'Invalid email or password';

export function toSessionUser(user: User): z.infer<typeof userSchema> {
  return { id: user.id, email: user.email, name: user.name, role: user.role };
}

export function toAdminUser(user: UserWithMemberships): z.infer<typeof adminUserSchema> {
  return { id: user.id, email: user.email, name: user.name, role: user.role, createdAt: user.createdAt, memberships: user.memberships };
}

export function toInvite(invite: Invite): z.infer<typeof inviteSchema> {
  return invite;
}

/** The link a person opens to accept an invite: relative, or absolute under ANSWERDESK_PUBLIC_URL. */
export function inviteUrl(publicUrl: string | undefined, token: string): string {
  const path = `/dashboard/invite?token=${token}`;
  return publicUrl ? `${publicUrl.replace(/\/+$/, '')}${path}` : path;
}

/**
 * Password checks with their own failure limit, per e-mail and per client address, counted in the
 * shared rate-limit store (Redis when set, so every node sees one count). A blocked e-mail or
 * address answers 429 before any password is checked; each wrong password counts against both.
 * Unknown e-mails count the same as known ones, so the limit reveals nothing either.
 */
export async function verifyLogin(request: FastifyRequest, email: string, password: string): Promise<User> {
  const { limiter, config, store } = request.server.deps;
  const counter = limiter.strikes('login', LOGIN_FAILURES, LOGIN_WINDOW_SECONDS);
  const keys = [`email:${hashKey(normalizeEmail(email)).slice(0, 32)}`, `ip:${clientAddress(request, proxyTrust(config.TRUST_PROXY))}`];
  const states = await Promise.all(keys.map((k) => counter.blocked(k)));
  const blocked = states.filter((s) => s.blocked);
  if (blocked.length) throw TooManyRequests(Math.max(...blocked.map((s) => s.retryAfter)));
  const user = await checkPassword(store.db, email, password);
  if (!user) {
    await Promise.all(keys.map((k) => counter.fail(k)));
    throw Unauthorized(INVALID_LOGIN);
  }
  return user;
}

/**
 * Changes the password of the session's user and ends their other sessions. A user removed
 * meanwhile took this session with them: 401, as their next request gets (not a wrong password).
 */
export async function changePassword(request: FastifyRequest, session: ActiveSession, currentPassword: string, newPassword: string): Promise<void> {
  try {
    await verifyCurrentPassword(request, session.user, currentPassword);
    await setPassword(request.server.deps.store.db, session.user.id, newPassword, session.idHash);
  } catch (err) {
    throw isNotFound(err) ? Unauthorized() : err;
  }
}

/** The current password of a signed-in user, under the same failure limit as sign-in (per e-mail). */
export async function verifyCurrentPassword(request: FastifyRequest, user: User, password: string): Promise<void> {
  const { limiter, store } = request.server.deps;
  const counter = limiter.strikes('login', LOGIN_FAILURES, LOGIN_WINDOW_SECONDS);
  const key = `email:${hashKey(user.email).slice(0, 32)}`;
  const state = await counter.blocked(key);
  if (state.blocked) throw TooManyRequests(state.retryAfter);
  if (await passwordMatches(store.db, user.id, password)) return;
  await counter.fail(key);
  throw BadRequest('Current password is incorrect');
}
