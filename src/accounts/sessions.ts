import type { Kysely } from 'kysely';
import { now } from '../lib/ids.js';
import { isForeignKeyViolation, type Database } from '../store/index.js';
import { hashToken, newToken } from './tokens.js';
import type { Membership, User } from './types.js';
import { listMemberships } from './users.js';

/** A session ends after this long unused… */
export const SESSION_IDLE_MS = 7 * 24 * 3600 * 1000;
/** …and this long after sign-in, however often it is used. */
export const SESSION_MAX_MS = 30 * 24 * 3600 * 1000;
/** The sliding expiry is written at most this often per session, not on every request. */
const TOUCH_EVERY_MS = 60 * 1000;

export interface NewSession {
  /** The cookie's value, known only to the browser; the store keeps its hash. */
  token: string;
  expiresAt: string;
}

export interface ActiveSession {
  /** The stored hash (to end this session, or to keep it when ending the others). */
  idHash: string;
  user: User;
  memberships: Membership[];
  expiresAt: string;
}

/** Starts a session of the user; null when the user was removed since they were read (nothing is stored). */
export async function createSession(db: Kysely<Database>, userId: string): Promise<NewSession | null> {
  const token = newToken();
  const at = Date.now();
  const expiresAt = new Date(at + SESSION_IDLE_MS).toISOString();
  const inserted = await db
    .insertInto('sessions')
    .values({
      id_hash: hashToken(token),
      user_id: userId,
      created_at: new Date(at).toISOString(),
      last_seen_at: new Date(at).toISOString(),
      expires_at: expiresAt,
      absolute_expires_at: new Date(at + SESSION_MAX_MS).toISOString(),
    })
    .execute()
    .then(
      () => true,
      (err: unknown) => {
        if (isForeignKeyViolation(err)) return false;
        throw err;
      },
    );
  return inserted ? { token, expiresAt } : null;
}

/**
 * The live session for a cookie value, read from the database on every request (so logout, a
 * password change or a user's removal ends it at once on every node), with its user and
 * memberships. Pushes the sliding expiry forward, at most once a minute, unless `touch` is false (a
 * check that the session still holds, such as an open event stream's, is not a use of it).
 */
export async function findSession(db: Kysely<Database>, token: string, { touch = true }: { touch?: boolean } = {}): Promise<ActiveSession | null> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
  const idHash = hashToken(token);
  const at = now();
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.id_hash',
      'sessions.last_seen_at',
      'sessions.expires_at',
      'sessions.absolute_expires_at',
      'users.id',
      'users.email',
      'users.name',
      'users.role',
      'users.created_at',
      'users.updated_at',
    ])
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', at)
    .where('sessions.absolute_expires_at', '>', at)
    .executeTakeFirst();
  if (!row) return null;
  let expiresAt = row.expires_at;
  if (touch && Date.parse(at) - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS) {
    const slid = new Date(Math.min(Date.parse(at) + SESSION_IDLE_MS, Date.parse(row.absolute_expires_at))).toISOString();
    await db.updateTable('sessions').set({ last_seen_at: at, expires_at: slid }).where('id_hash', '=', idHash).execute();
    expiresAt = slid;
  }
  return {
    idHash,
    user: { id: row.id, email: row.email, name: row.name, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at },
    memberships: await listMemberships(db, row.id),
    expiresAt,
  };
}

/** Ends one session (logout). */
export async function endSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** Ends the sessions of a user (CLI password reset). */
export async function endUserSessions(db: Kysely<Database>, userId: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes sessions past either expiry (they no longer work anyway); run from time to time. */
export async function pruneSessions(db: Kysely<Database>): Promise<number> {
  const at = now();
  const result = await db.deleteFrom('sessions').where((eb) => eb.or([eb('expires_at', '<=', at), eb('absolute_expires_at', '<=', at)])).executeTakeFirst();
  return Number(result.numDeletedRows);
}
