import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The queue's waiting jobs in the order they are claimed. The claim reads the oldest queued job
 * whose source has no other job running; over the (status, lease_until, created_at) index it had to
 * fetch and sort every queued job and check each one's source first, so a claim cost grew with the
 * queue (a project loading thousands of small sources queues them faster than they are ingested).
 * Read in this order it stops at the first job that may run.
 */
export const knowledgeJobsQueued: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex('knowledge_jobs_queued').on('knowledge_jobs').column('created_at').where(sql.ref('status'), '=', 'queued').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('knowledge_jobs_queued').execute();
  },
};
