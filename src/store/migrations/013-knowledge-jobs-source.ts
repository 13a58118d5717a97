import type { Kysely, Migration } from 'kysely';

/**
 * Ingestion jobs by source: a worker claims a job only when no other job of its source runs (two
 * generations of one source written at once would delete each other's chunks), which it checks
 * per candidate; "is an ingestion of this source pending" and the cascade of a source's deletion
 * read the same way. Without it each of those scans every job ever run.
 */
export const knowledgeJobsSource: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex('knowledge_jobs_source').on('knowledge_jobs').columns(['source_id', 'status']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('knowledge_jobs_source').execute();
  },
};
