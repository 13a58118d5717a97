import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * SQLite: the FTS5 index gains the project as an indexed column, so a search can intersect the
 * project's postings with the query's inside FTS5 and rank only that project's matches (one
 * tenant's big corpus no longer slows another's searches), and ranks with `ORDER BY rank` (bm25
 * weights stored as the table's `rank` option) so the top candidates are picked before any join.
 *
 * The indexed project value is the random part of the id (`proj_AbC…` → `AbC…`, one token): the
 * shared `proj` prefix would be a token in every row. FTS5 folds case, so searches still check
 * `project_id` exactly. The content is read through a view that computes the same value, so
 * FTS5's `rebuild` (used here to index the existing chunks) and the triggers agree.
 *
 * PostgreSQL: when the btree_gin extension can be had (it ships with the server's contrib
 * modules), the tsvector's GIN index becomes one over (project_id, tsv), so a search walks only
 * the project's postings instead of every project's matches before filtering. The extension goes
 * into `public`, never into an app schema that may be dropped with its tables. Without it the
 * single-column index stays and search works the same, only without that narrowing.
 *
 * The new index keeps a short pending list (256 kB instead of the server's default 4 MB): GIN
 * batches new entries there until vacuum merges them, and every search scans the whole list, so
 * after a large ingestion a long list made each search pay for it.
 */
export const knowledgeSearch: Migration = {
  async up(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
      const { rows } = await sql<{ usable: boolean }>`
        select exists (select 1 from pg_extension where extname = 'btree_gin')
            or (exists (select 1 from pg_available_extensions where name = 'btree_gin')
                and has_database_privilege(current_database(), 'CREATE')
                and exists (select 1 from pg_namespace where nspname = 'public' and has_schema_privilege(oid, 'CREATE')))
          as usable`.execute(db);
      if (!rows[0]?.usable) return;
      await sql`create extension if not exists btree_gin schema public`.execute(db);
      await sql`create index knowledge_chunks_project_tsv on knowledge_chunks using gin (project_id, tsv) with (gin_pending_list_limit = 256)`.execute(db);
      await sql`drop index knowledge_chunks_tsv`.execute(db);
      return;
    }
    await sql`drop trigger knowledge_chunks_ai`.execute(db);
    await sql`drop trigger knowledge_chunks_ad`.execute(db);
    await sql`drop table knowledge_fts`.execute(db);
    await sql`create view knowledge_fts_content as
      select rowid, substr(project_id, instr(project_id, '_') + 1) as project, title, headings, text
      from knowledge_chunks`.execute(db);
    await sql`create virtual table knowledge_fts using fts5(
      project, title, headings, text,
      content='knowledge_fts_content', content_rowid='rowid',
      tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
    // bm25 column weights: the project column never scores; a heading match says more than a body
    // match; the page title is shared by every chunk of a page.
    await sql`insert into knowledge_fts(knowledge_fts, rank) values ('rank', 'bm25(0.0, 1.5, 3.0, 1.0)')`.execute(db);
    await sql`insert into knowledge_fts(knowledge_fts) values ('rebuild')`.execute(db);
    await sql`create trigger knowledge_chunks_ai after insert on knowledge_chunks begin
      insert into knowledge_fts(rowid, project, title, headings, text)
        values (new.rowid, substr(new.project_id, instr(new.project_id, '_') + 1), new.title, new.headings, new.text);
    end`.execute(db);
    await sql`create trigger knowledge_chunks_ad after delete on knowledge_chunks begin
      insert into knowledge_fts(knowledge_fts, rowid, project, title, headings, text)
        values ('delete', old.rowid, substr(old.project_id, instr(old.project_id, '_') + 1), old.title, old.headings, old.text);
    end`.execute(db);
  },
  async down(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
      await sql`create index if not exists knowledge_chunks_tsv on knowledge_chunks using gin (tsv)`.execute(db);
      await sql`drop index if exists knowledge_chunks_project_tsv`.execute(db);
      return;
    }
    await sql`drop trigger knowledge_chunks_ai`.execute(db);
    await sql`drop trigger knowledge_chunks_ad`.execute(db);
    await sql`drop table knowledge_fts`.execute(db);
    await sql`drop view knowledge_fts_content`.execute(db);
    await sql`create virtual table knowledge_fts using fts5(
      title, headings, text,
      content='knowledge_chunks', content_rowid='rowid',
      tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
    await sql`insert into knowledge_fts(knowledge_fts) values ('rebuild')`.execute(db);
    await sql`create trigger knowledge_chunks_ai after insert on knowledge_chunks begin
      insert into knowledge_fts(rowid, title, headings, text) values (new.rowid, new.title, new.headings, new.text);
    end`.execute(db);
    await sql`create trigger knowledge_chunks_ad after delete on knowledge_chunks begin
      insert into knowledge_fts(knowledge_fts, rowid, title, headings, text)
        values ('delete', old.rowid, old.title, old.headings, old.text);
    end`.execute(db);
  },
};
