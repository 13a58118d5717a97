import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * At most one running job per knowledge source, held by the database. The claim already skips a
 * job whose source has another job running, but on PostgreSQL that check reads the statement's
 * snapshot, which does not show another node's claim before it commits: two nodes claiming at the
 * same moment could each start a different job of one source, and two generations of one source
 * written at once delete each other's chunks at their switch. Under this index the later claim
 * waits for the earlier one to commit, then fails with a unique violation, which the claim reads
 * as "this job may not run now" (src/knowledge/job-store.ts).
 *
 * A database written before it may already hold two running jobs of one source (that very race),
 * and the index could not be built over them. Per source, the job whose lease runs latest is kept:
 * its node renewed it last, so it is the likeliest to be alive. The others go back to the queue as
 * a job given back at shutdown did then (owner and lease cleared, the attempt not counted), so their
 * node's next renewal or switch finds the job no longer its own and stops, and they run again
 * after the kept one; their half-written chunks are deleted by the kept job's switch or by their
 * own next start.
 */
export const knowledgeJobsOneRunning: Migration = {
  async up(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
      // Until this transaction ends, a node still on the previous version cannot claim a second job
      // of a source between the clean-up below and the index build (which would then fail).
      await sql`lock table knowledge_jobs in share row exclusive mode`.execute(db);
    }
    await sql`
      update knowledge_jobs set status = 'queued', lease_owner = null, lease_until = null,
        attempts = case when attempts > 0 then attempts - 1 else 0 end, updated_at = ${new Date().toISOString()}
      where status = 'running' and exists (
        select 1 from knowledge_jobs kept
        where kept.source_id = knowledge_jobs.source_id and kept.status = 'running' and kept.id <> knowledge_jobs.id
          and (coalesce(kept.lease_until, '') > coalesce(knowledge_jobs.lease_until, '')
            or (coalesce(kept.lease_until, '') = coalesce(knowledge_jobs.lease_until, '') and kept.id > knowledge_jobs.id)))`.execute(db);
    await db.schema
      .createIndex('knowledge_jobs_one_running')
      .on('knowledge_jobs')
      .column('source_id')
      .unique()
      .where(sql.ref('status'), '=', 'running')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('knowledge_jobs_one_running').execute();
  },
};
