import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * PostgreSQL: a GIN index over the words of each chunk's title and headings alone, so a search for
 * a word held by a large share of the chunks can read the chunks that name it in a title or
 * heading without visiting every chunk that holds it (the weighted `tsv`'s index cannot tell a
 * title word from a body word: its weights are checked on the rows). Over (project_id, …) when the
 * btree_gin extension is installed (migration 006), like the `tsv` index; with the same short
 * pending list, which every search scans.
 *
 * SQLite needs nothing: an FTS5 column filter (`{title headings}: word`) reads the postings it
 * already has.
 */
export const knowledgeHeadingIndex: Migration = {
  async up(db: Kysely<any>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) return;
    const { rows } = await sql<{ installed: boolean }>`
      select exists (select 1 from pg_extension where extname = 'btree_gin') as installed`.execute(db);
    const words = sql`to_tsvector('english'::regconfig, title || ' ' || headings)`;
    if (rows[0]?.installed) {
      await sql`create index knowledge_chunks_project_head on knowledge_chunks using gin (project_id, (${words})) with (gin_pending_list_limit = 256)`.execute(db);
    } else {
      await sql`create index knowledge_chunks_project_head on knowledge_chunks using gin ((${words})) with (gin_pending_list_limit = 256)`.execute(db);
    }
  },
  async down(db: Kysely<any>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) return;
    await sql`drop index if exists knowledge_chunks_project_head`.execute(db);
  },
};
