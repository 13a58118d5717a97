import { sql, type Kysely } from 'kysely';
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
  // SQL text, as the send's other statements: the query builder cost more than the statement.
  const result = await sql`
    insert into answer_leases (conversation_id, token, expires_at) values (${conversationId}, ${token}, ${expiresAt})
    on conflict (conversation_id) do update set token = ${token}, expires_at = ${expiresAt}
    where answer_leases.expires_at < ${at.toISOString()}`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1 ? token : null;
}

/** Between tries of {@link claimAnswerLeaseWithin}. */
const CLAIM_RETRY_MS = 20;

/**
 * Claims the lease as {@link claimAnswerLease} does, trying again for up to `waitMs` while another
 * send holds it: for sends that hold it only for a write (a message while a person has the
 * conversation), so two of them at once wait for each other instead of one being refused.
 */
export async function claimAnswerLeaseWithin(db: Db, conversationId: string, ttlMs: number, waitMs: number): Promise<string | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const token = await claimAnswerLease(db, conversationId, ttlMs);
    if (token || Date.now() + CLAIM_RETRY_MS > deadline) return token;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS));
  }
}

/** Ends the lease, if it is still ours (an expired one may have been taken over). */
export async function releaseAnswerLease(db: Db, conversationId: string, token: string): Promise<void> {
  await sql`delete from answer_leases where conversation_id = ${conversationId} and token = ${token}`.execute(db);
}
