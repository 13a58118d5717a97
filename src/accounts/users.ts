import type { Kysely, Selectable, Transaction } from 'kysely';
import { Conflict, NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { projectExists } from '../projects/projects.js';
import { isForeignKeyViolation, isUniqueViolation, type Database } from '../store/index.js';
import { lockingRows } from '../store/lock.js';
import type { UsersTable } from '../store/schema.js';
import { hashPassword, UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import type { Membership, ProjectRole, User, UserRole, UserWithMemberships } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** E-mail addresses are compared and stored lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toUser(row: Selectable<UsersTable>): User {
  return { id: row.id, email: row.email, name: row.name, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at };
}

export interface NewUser {
  email: string;
  name: string;
  role: UserRole;
  password: string;
  memberships?: Membership[];
}

/** Creates a user (and their memberships); 409 when the e-mail is taken, 404 when a project is unknown. */
export async function createUser(db: Kysely<Database>, input: NewUser): Promise<UserWithMemberships> {
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute((trx) => insertUser(trx, input, passwordHash));
}

/** The insert of createUser, inside a caller's transaction (setup, invite acceptance). */
export async function insertUser(trx: Transaction<Database>, input: NewUser, passwordHash: string): Promise<UserWithMemberships> {
  const at = now();
  const row = {
    id: newId('user'),
    email: normalizeEmail(input.email),
    name: input.name.trim(),
    role: input.role,
    password_hash: passwordHash,
    created_at: at,
    updated_at: at,
  };
  try {
    await trx.insertInto('users').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw Conflict('A user with this email already exists');
    throw err;
  }
  const memberships: Membership[] = [];
  for (const m of input.memberships ?? []) {
    await upsertMembership(trx, row.id, m.projectId, m.role);
    memberships.push({ projectId: m.projectId, role: m.role });
  }
  return { ...toUser(row), memberships };
}

/** Whether any user exists (the first-run setup is offered only while none does). */
export async function hasUsers(db: Db): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}

export async function getUser(db: Db, id: string): Promise<User> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw NotFound('User not found');
  return toUser(row);
}

export async function findUserByEmail(db: Db, email: string): Promise<User | null> {
  const row = await db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** The user with their memberships, oldest project first. */
export async function getUserWithMemberships(db: Db, id: string): Promise<UserWithMemberships> {
  const user = await getUser(db, id);
  return { ...user, memberships: await listMemberships(db, id) };
}

/** Every user with their memberships, oldest first. */
export async function listUsers(db: Db): Promise<UserWithMemberships[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  const all = await db.selectFrom('memberships').select(['user_id', 'project_id', 'role']).orderBy('created_at', 'asc').orderBy('project_id', 'asc').execute();
  return rows.map((row) => ({
    ...toUser(row),
    memberships: all.filter((m) => m.user_id === row.id).map((m) => ({ projectId: m.project_id, role: m.role })),
  }));
}

/**
 * Checks an e-mail and password. An unknown e-mail is verified against a hash no password matches,
 * so both failures cost the same scrypt run and answer in the same time.
 */
export async function checkPassword(db: Db, email: string, password: string): Promise<User | null> {
  const row = await db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  const ok = await verifyPassword(password, row?.password_hash ?? UNMATCHABLE_HASH);
  return ok && row ? toUser(row) : null;
}

/** Whether `password` is the user's current one; 404 when the user is gone. */
export async function passwordMatches(db: Db, userId: string, password: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  if (!row) throw NotFound('User not found');
  return verifyPassword(password, row.password_hash);
}

/** Replaces the password and ends every session of the user but `keepSessionHash` (the one changing it). */
export async function setPassword(db: Kysely<Database>, userId: string, password: string, keepSessionHash?: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  await db.transaction().execute(async (trx) => {
    const result = await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: now() }).where('id', '=', userId).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw NotFound('User not found');
    let q = trx.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepSessionHash) q = q.where('id_hash', '!=', keepSessionHash);
    await q.execute();
  });
}

/** Renames and/or changes the role; the last owner cannot become a member (409). */
export async function updateUser(db: Kysely<Database>, userId: string, patch: { name?: string; role?: UserRole }): Promise<UserWithMemberships> {
  await db.transaction().execute(async (trx) => {
    const user = await getUser(trx, userId);
    if (patch.role === 'member' && user.role === 'owner') await assertAnotherOwner(trx, userId);
    const set: Partial<Selectable<UsersTable>> = { updated_at: now() };
    if (patch.name !== undefined) set.name = patch.name.trim();
    if (patch.role !== undefined) set.role = patch.role;
    await trx.updateTable('users').set(set).where('id', '=', userId).execute();
  });
  return getUserWithMemberships(db, userId);
}

/** Removes the user; their sessions and memberships go with them (at once, on every node). */
export async function removeUser(db: Kysely<Database>, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const user = await getUser(trx, userId);
    if (user.role === 'owner') await assertAnotherOwner(trx, userId);
    await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
    await trx.deleteFrom('memberships').where('user_id', '=', userId).execute();
    await trx.deleteFrom('users').where('id', '=', userId).execute();
  });
}

/**
 * 409 unless another owner remains. The owners' rows are locked first: two owners demoting or
 * removing each other at once would each see the other still there, and leave none.
 */
async function assertAnotherOwner(trx: Transaction<Database>, userId: string): Promise<void> {
  const owners = await lockingRows(trx, trx.selectFrom('users').select('id').where('role', '=', 'owner').orderBy('id')).execute();
  if (!owners.some((o) => o.id !== userId)) throw Conflict('The last owner cannot be removed or made a member');
}

export async function listMemberships(db: Db, userId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('memberships')
    .select(['project_id', 'role'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .orderBy('project_id', 'asc')
    .execute();
  return rows.map((r) => ({ projectId: r.project_id, role: r.role }));
}

/** Gives the user `role` on the project (replacing any role they had there). */
export async function setMembership(db: Kysely<Database>, userId: string, projectId: string, role: ProjectRole): Promise<UserWithMemberships> {
  try {
    await db.transaction().execute(async (trx) => {
      await getUser(trx, userId);
      await upsertMembership(trx, userId, projectId, role);
    });
  } catch (err) {
    if (!isForeignKeyViolation(err)) throw err;
    // The user or the project was deleted after it was read: the answer it would have had after.
    await getUser(db, userId);
    throw NotFound('Project not found');
  }
  return getUserWithMemberships(db, userId);
}

async function upsertMembership(trx: Db, userId: string, projectId: string, role: ProjectRole): Promise<void> {
  if (!(await projectExists(trx as Kysely<Database>, projectId))) throw NotFound('Project not found');
  // One statement: two roles set at once would both find no row and both insert it (a 500).
  await trx
    .insertInto('memberships')
    .values({ user_id: userId, project_id: projectId, role, created_at: now() })
    .onConflict((oc) => oc.columns(['user_id', 'project_id']).doUpdateSet({ role }))
    .execute();
}

/** Takes the user's role on the project away; 404 when they had none. */
export async function removeMembership(db: Db, userId: string, projectId: string): Promise<void> {
  const result = await db.deleteFrom('memberships').where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw NotFound('Membership not found');
}
