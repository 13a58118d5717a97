import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * Knowledge sources, their ingestion jobs and their chunks, plus the full-text index: FTS5 on
 * SQLite, a weighted tsvector with a GIN index on PostgreSQL.
 *
 * Visibility: a chunk is searchable only when its `generation` equals its source's `generation`.
 * Ingestion writes a new generation beside the old one and switches the source's pointer in one
 * update, so a half-written index is never searched and a re-sync keeps the old text answering
 * until the new one is complete.
 */
export const knowledge: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('knowledge_sources')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('title', 'text')
      .addColumn('url', 'text')
      .addColumn('payload', 'text')
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('pages_done', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pages_total', 'integer')
      .addColumn('chunks_done', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('generation', 'text')
      .addColumn('synced_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('knowledge_sources_project')
      .on('knowledge_sources')
      .columns(['project_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('knowledge_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('source_id', 'text', (c) => c.notNull().references('knowledge_sources.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('generation', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('knowledge_jobs_claim')
      .on('knowledge_jobs')
      .columns(['status', 'lease_until', 'created_at'])
      .execute();

    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema
      .createTable('knowledge_chunks')
      // An explicit integer key: FTS5 external content points at it, and unlike SQLite's implicit
      // rowid it survives VACUUM unchanged.
      .$call((t) =>
        sqlite
          ? t.addColumn('rowid', 'integer', (c) => c.primaryKey().autoIncrement())
          : t.addColumn('rowid', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity()),
      )
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('source_id', 'text', (c) => c.notNull().references('knowledge_sources.id').onDelete('cascade'))
      .addColumn('generation', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('heading_path', 'text', (c) => c.notNull())
      .addColumn('headings', 'text', (c) => c.notNull())
      .addColumn('url', 'text')
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('embedding', 'text')
      .execute();
    await db.schema
      .createIndex('knowledge_chunks_source')
      .on('knowledge_chunks')
      .columns(['source_id', 'generation', 'position'])
      .execute();
    await db.schema.createIndex('knowledge_chunks_project').on('knowledge_chunks').column('project_id').execute();

    if (sqlite) {
      await sql`create virtual table knowledge_fts using fts5(
        title, headings, text,
        content='knowledge_chunks', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
      // External content: the index follows the table through triggers (cascaded deletes included).
      await sql`create trigger knowledge_chunks_ai after insert on knowledge_chunks begin
        insert into knowledge_fts(rowid, title, headings, text) values (new.rowid, new.title, new.headings, new.text);
      end`.execute(db);
      await sql`create trigger knowledge_chunks_ad after delete on knowledge_chunks begin
        insert into knowledge_fts(knowledge_fts, rowid, title, headings, text)
          values ('delete', old.rowid, old.title, old.headings, old.text);
      end`.execute(db);
    } else {
      await sql`alter table knowledge_chunks add column tsv tsvector generated always as (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', headings), 'B') ||
        setweight(to_tsvector('english', text), 'C')) stored`.execute(db);
      await sql`create index knowledge_chunks_tsv on knowledge_chunks using gin (tsv)`.execute(db);
    }
  },
  async down(db: Kysely<any>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) await sql`drop table if exists knowledge_fts`.execute(db);
    await db.schema.dropTable('knowledge_chunks').execute();
    await db.schema.dropTable('knowledge_jobs').execute();
    await db.schema.dropTable('knowledge_sources').execute();
  },
};
