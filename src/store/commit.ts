import { SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * A condition that is always true and lets the one statement it is part of commit without waiting
 * for the write-ahead log to reach the disk: PostgreSQL's `synchronous_commit = off` for that
 * statement's own transaction (`set_config(…, true)`), which on a slow disk saves milliseconds per
 * commit. The commit is as atomic and as visible as any; a crash of the database server may lose
 * the last such commits (a fraction of a second), never a later commit that waited for the disk:
 * the log is written in order, so a later durable commit makes every earlier one durable too.
 *
 * For writes whose loss the app recovers from on its own: an ingestion's progress, claims and
 * chunks, which a lost lease or a retry redo and which no search sees before the job's switch of
 * generations (a durable commit). Only in a statement that commits alone: inside an explicit
 * transaction the setting would hold until that transaction ends. SQLite (`synchronous = NORMAL`
 * in WAL mode) never waits for the disk per commit: there it is `true` and nothing else.
 */
export function withoutFlushWait(db: Kysely<any>): RawBuilder<boolean> {
  return db.getExecutor().adapter instanceof SqliteAdapter
    ? sql<boolean>`1`
    : sql<boolean>`(set_config('synchronous_commit', 'off', true) = 'off')`;
}
