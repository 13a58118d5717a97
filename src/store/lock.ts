import { SqliteAdapter, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Tables whose rows a transaction locks before it checks and writes what hangs off them. */
export type LockedTable = 'projects' | 'conversations' | 'knowledge_sources' | 'eval_suites';

/**
 * Locks the row `id` of `table` until the transaction ends and says whether it exists: a check made
 * after it (a count under a cap, a state, the next position in a conversation) still holds when the
 * transaction writes, however many requests run the same check at once. PostgreSQL: `SELECT … FOR
 * NO KEY UPDATE`, which another transaction locking the same row waits for (under READ COMMITTED
 * its later statements then see what the first one committed), while rows that only reference it
 * (a message of the conversation, a source of the project) are still written meanwhile. SQLite: the
 * store's one connection runs one transaction at a time, so a transaction already holds the whole
 * database; the row is only read.
 */
export async function lockRow(trx: Transaction<Database>, table: LockedTable, id: string): Promise<boolean> {
  // SQL text: it runs on every message appended, where building a query costs more than running it.
  const lock = locksRows(trx) ? sql` for no key update` : sql``;
  const { rows } = await sql`select 1 from ${sql.table(table)} where id = ${id}${lock}`.execute(trx);
  return rows.length > 0;
}

/**
 * Takes the lock named `key` until the transaction ends: for a check that rests on no one row of
 * the module's own, such as a count of a project's webhooks under their cap (the project's row is
 * another module's). PostgreSQL: a transaction-level advisory lock on the key's 64-bit hash, which
 * another transaction taking the same key waits for; SQLite: nothing, as for lockRow.
 */
export async function lockKey(trx: Transaction<Database>, key: string): Promise<void> {
  if (locksRows(trx)) await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/**
 * `query` that locks the rows it reads until the transaction ends, as lockRow does one row: `FOR NO
 * KEY UPDATE` on PostgreSQL; as it is on SQLite, whose one connection runs one transaction at a time
 * (and which does not parse the clause).
 */
export function lockingRows<Q extends { forNoKeyUpdate(): Q }>(trx: Transaction<Database>, query: Q): Q {
  return locksRows(trx) ? query.forNoKeyUpdate() : query;
}

/**
 * The clause that keeps the rows a read returns from being deleted until the transaction ends, for
 * a transaction that goes on to insert rows referencing them: ` for key share` on PostgreSQL (a
 * delete waits for the transaction; a row deleted first is not read, rather than the insert's
 * foreign key failing later, and ordinary updates of the rows go on meanwhile); nothing on SQLite,
 * as for lockRow. For reads written as SQL text.
 */
export function keepingRows(trx: Kysely<Database>): RawBuilder<unknown> {
  return locksRows(trx) ? sql` for key share` : sql``;
}

const locksRows = (trx: Kysely<Database>) => !(trx.getExecutor().adapter instanceof SqliteAdapter);
