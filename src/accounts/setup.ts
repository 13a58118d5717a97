import type { Kysely } from 'kysely';
import { Conflict, Forbidden } from '../lib/errors.js';
import { now } from '../lib/ids.js';
import type { Database } from '../store/index.js';
import { hashPassword } from './passwords.js';
import { hashToken, newToken } from './tokens.js';
import type { UserWithMemberships } from './types.js';
import { hasUsers, insertUser } from './users.js';

/**
 * First run: while no user exists, each server start makes a one-time setup token and prints its
 * link. Every token printed stays valid until the first owner is created with one of them; then
 * all are deleted. Only the hash is stored. Returns null once a user exists.
 */
export async function issueSetupToken(db: Kysely<Database>): Promise<string | null> {
  if (await hasUsers(db)) return null;
  const token = newToken();
  await db.insertInto('setup_tokens').values({ token_hash: hashToken(token), created_at: now() }).execute();
  return token;
}

/** Whether the first owner still has to be created. */
export async function setupRequired(db: Kysely<Database>): Promise<boolean> {
  return !(await hasUsers(db));
}

/**
 * Creates the first owner with a printed token. 409 once any user exists; 403 for a token that was
 * never printed. All tokens are consumed in the same transaction, so two concurrent attempts
 * cannot both succeed.
 */
export async function completeSetup(
  db: Kysely<Database>,
  input: { token: string; email: string; name: string; password: string },
): Promise<UserWithMemberships> {
  if (await hasUsers(db)) throw Conflict('Setup is already done');
  const passwordHash = await hashPassword(input.password);
  const hash = hashToken(input.token);
  return db.transaction().execute(async (trx) => {
    const consumed = await trx.deleteFrom('setup_tokens').returning('token_hash').execute();
    if (!consumed.some((r) => r.token_hash === hash)) {
      // Nothing is consumed by a wrong token: roll the deletion back.
      throw consumed.length === 0 && (await hasUsers(trx)) ? Conflict('Setup is already done') : Forbidden('Invalid setup token');
    }
    if (await hasUsers(trx)) throw Conflict('Setup is already done');
    return insertUser(trx, { email: input.email, name: input.name, role: 'owner', password: input.password }, passwordHash);
  });
}
