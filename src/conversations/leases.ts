import type { Kysely } from 'kysely';
import { base62 } from '../lib/ids.js';
import type { Database } from '../store/index.js';

type Db = Kysely<Database>;

/**
 * Claims the right to answer in `conversationId` until `ttlMs` from now. One conditional write: the
 * insert wins when no answer is running, the update wins only over a lease that has expired (a node
 * that died mid-answer). Every node shares the table, so a second send is refused on any node.
 * Returns the lease token, or null when another answer holds the conversation.
 */
export async function claimAnswerLease(db: Db, conversationId: string, ttlMs: number): Promise<string | null> {
  const token = base62(22);
  const at = new Date();
  const expiresAt = new Date(at.getTime() + ttlMs).toISOString();
  const result = await db
    .insertInto('answer_leases')
    .values({ conversation_id: conversationId, token, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column('conversation_id')
        .doUpdateSet({ token, expires_at: expiresAt })
        .where('answer_leases.expires_at', '<', at.toISOString()),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1 ? token : null;
}

/** Ends the lease, if it is still ours (an expired one may have been taken over). */
export async function releaseAnswerLease(db: Db, conversationId: string, token: string): Promise<void> {
  await db.deleteFrom('answer_leases').where('conversation_id', '=', conversationId).where('token', '=', token).execute();
}
