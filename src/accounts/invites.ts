import type { Kysely, Selectable } from 'kysely';
import { Conflict, NotFound, Unauthorized } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { keepExistingProjects, projectExists } from '../projects/projects.js';
import { isForeignKeyViolation, type Database } from '../store/index.js';
import { lockKey } from '../store/lock.js';
import type { InvitesTable } from '../store/schema.js';
import { hashPassword } from './passwords.js';
import { hashToken, newToken } from './tokens.js';
import type { Membership, UserRole, UserWithMemberships } from './types.js';
import { findUserByEmail, insertUser, normalizeEmail } from './users.js';

/** How long an invite link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

export interface Invite {
  id: string;
  email: string;
  role: UserRole;
  projects: Membership[];
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
}

function toInvite(row: Selectable<InvitesTable>): Invite {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    projects: JSON.parse(row.projects) as Membership[],
    createdBy: row.created_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Creates a one-time invite and returns it with its token (shown once: only its hash is stored).
 * 409 when the address already has an account; 404 when a project is unknown. A new invite for the
 * same address replaces the older one.
 */
export async function createInvite(
  db: Kysely<Database>,
  input: { email: string; role: UserRole; projects?: Membership[]; createdBy?: string | null },
): Promise<{ invite: Invite; token: string }> {
  const email = normalizeEmail(input.email);
  if (await findUserByEmail(db, email)) throw Conflict('A user with this email already exists');
  for (const p of input.projects ?? []) if (!(await projectExists(db, p.projectId))) throw NotFound('Project not found');
  const token = newToken();
  const at = Date.now();
  const row = {
    id: newId('inv'),
    token_hash: hashToken(token),
    email,
    role: input.role,
    projects: JSON.stringify(input.projects ?? []),
    created_by: input.createdBy ?? null,
    created_at: new Date(at).toISOString(),
    expires_at: new Date(at + INVITE_TTL_MS).toISOString(),
  };
  await db
    .transaction()
    .execute(async (trx) => {
      // Two invites of one address at once would each delete none and both insert: the address's
      // lock makes the second replace the first, as it does one after the other.
      await lockKey(trx, `invite:${email}`);
      await trx.deleteFrom('invites').where('email', '=', email).execute();
      await trx.insertInto('invites').values(row).execute();
    })
    .catch((err: unknown) => {
      // `createdBy`, the signed-in user inviting, was removed meanwhile, and their session with
      // them: 401, as their next request gets.
      throw isForeignKeyViolation(err) ? Unauthorized() : err;
    });
  return { invite: toInvite(row), token };
}

/** Open invites (not expired), newest first. */
export async function listInvites(db: Kysely<Database>): Promise<Invite[]> {
  const rows = await db.selectFrom('invites').selectAll().where('expires_at', '>', now()).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toInvite);
}

export async function revokeInvite(db: Kysely<Database>, id: string): Promise<void> {
  const result = await db.deleteFrom('invites').where('id', '=', id).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw NotFound('Invite not found');
}

/** The open invite a link's token names; 404 when unknown, used or expired (one answer for all three). */
export async function findInvite(db: Kysely<Database>, token: string): Promise<Invite> {
  const row = await db
    .selectFrom('invites')
    .selectAll()
    .where('token_hash', '=', hashToken(token))
    .where('expires_at', '>', now())
    .executeTakeFirst();
  if (!row) throw NotFound('Invite not found or expired');
  return toInvite(row);
}

/**
 * Accepts an invite: creates the user with the invite's role and project memberships and consumes
 * the invite, in one transaction (a link works once, even when used twice at the same moment).
 */
export async function acceptInvite(db: Kysely<Database>, token: string, input: { name: string; password: string }): Promise<UserWithMemberships> {
  await findInvite(db, token);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom('invites')
      .where('token_hash', '=', hashToken(token))
      .where('expires_at', '>', now())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw NotFound('Invite not found or expired');
    const invite = toInvite(row);
    // A project deleted since the invite was made is skipped rather than failing the acceptance. The
    // read keeps the projects it finds until the memberships are written: a delete under way waits,
    // or came first and its project is not found, rather than failing the membership's foreign key.
    const existing = await keepExistingProjects(trx, invite.projects.map((p) => p.projectId));
    const memberships: Membership[] = invite.projects.filter((p) => existing.has(p.projectId));
    return insertUser(trx, { email: invite.email, name: input.name, role: invite.role, password: input.password, memberships }, passwordHash);
  });
}
