import type { Kysely, Selectable } from 'kysely';
import { newId, now } from '../lib/ids.js';
import type { Database } from '../store/index.js';
import { keysetPage, readCursor } from '../store/keyset.js';
import type { ActionCallsTable } from '../store/schema.js';

type Db = Kysely<Database>;
export type ActionCallRow = Selectable<ActionCallsTable>;

/** One call of an action, as its log keeps it: no argument, header or body, only what happened. */
export type NewActionCall = Omit<ActionCallRow, 'id' | 'created_at'>;

/** Appends a call to the action's log. */
export async function recordCall(db: Db, call: NewActionCall): Promise<void> {
  await db.insertInto('action_calls').values({ id: newId('call'), ...call, created_at: now() }).execute();
}

/** One page of an action's call log, newest first (keyset paging: stable while calls are added). */
export async function listCalls(db: Db, actionId: string, page: { limit: number; cursor?: string }): Promise<{ rows: ActionCallRow[]; nextCursor?: string }> {
  const after = readCursor(page.cursor);
  const q = db.selectFrom('action_calls').selectAll().where('action_id', '=', actionId);
  return keysetPage(q, { time: 'created_at', id: 'id' }, (r) => ({ time: r.created_at, id: r.id }), { limit: page.limit, after });
}
