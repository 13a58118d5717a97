import { SqliteAdapter, sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { base62, newId, now } from '../lib/ids.js';
import { withoutFlushWait } from '../store/commit.js';
import { isUniqueViolation } from '../store/index.js';
import type { Database, KnowledgeJobsTable } from '../store/schema.js';
import { enqueueEvent, withoutEndpoints } from '../webhooks/events.js';
import type { SourceRow } from './ingest.js';

/**
 * The job queue's statements, in the two forms of the store. On PostgreSQL each step of a job is one
 * statement that commits on its own (data-modifying CTEs), because a one-page source is mostly
 * round trips: what took fifteen statements per source (four of them BEGIN and COMMIT) takes four
 * with the chunk INSERT.
 * On SQLite, whose driver answers synchronously and whose commits do not wait for the disk, a
 * statement costs microseconds: there the same steps are the plain statements in a transaction.
 */

export type JobRow = Selectable<KnowledgeJobsTable>;
type Db = Kysely<Database>;

const onSqlite = (db: Kysely<Database> | Transaction<Database>) => db.getExecutor().adapter instanceof SqliteAdapter;

/** A new job's row: queued, into a fresh generation. */
function newJob(sourceId: string, projectId: string, at: string): JobRow {
  return {
    id: newId('job'),
    source_id: sourceId,
    project_id: projectId,
    generation: `gen_${base62(16)}`,
    status: 'queued',
    attempts: 0,
    lease_owner: null,
    lease_until: null,
    error: null,
    created_at: at,
    updated_at: at,
  };
}

/** Queues an ingestion of `sourceId` into a fresh generation. Runs inside the caller's transaction. */
export async function enqueueIngestion(db: Kysely<Database> | Transaction<Database>, sourceId: string, projectId: string): Promise<void> {
  await db.insertInto('knowledge_jobs').values(newJob(sourceId, projectId, now())).execute();
}

/**
 * Deletes a source's jobs, in the transaction that deletes the source and before its row: the
 * claim, the switch, a failure and a requeue each lock a job's row and then its source's, and the
 * cascade from the source's row would take them the other way round (on PostgreSQL, a deadlock
 * with a claim or a switch of that source, and a 500 for the delete).
 */
export async function deleteSourceJobs(db: Kysely<Database> | Transaction<Database>, sourceId: string): Promise<void> {
  await db.deleteFrom('knowledge_jobs').where('source_id', '=', sourceId).execute();
}

/**
 * Deletes a project's knowledge jobs, in the transaction that deletes the project and before its
 * row, for the same reason: the project's cascade runs project → sources → jobs.
 */
export async function deleteProjectJobs(db: Kysely<Database> | Transaction<Database>, projectId: string): Promise<void> {
  await db.deleteFrom('knowledge_jobs').where('project_id', '=', projectId).execute();
}

/**
 * Stores a new source and queues its ingestion, atomically. PostgreSQL: one statement (the source's
 * INSERT in a CTE), one round trip and one commit, which waits for the disk: the caller is told the
 * source exists. SQLite: the two INSERTs in a transaction.
 */
export async function insertSourceWithJob(db: Db, row: SourceRow): Promise<void> {
  const job = newJob(row.id, row.project_id, row.created_at);
  if (onSqlite(db)) {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('knowledge_sources').values(row).execute();
      await trx.insertInto('knowledge_jobs').values(job).execute();
    });
    return;
  }
  // SQL text: building and compiling the query in Kysely cost more of this process's time than the
  // server spends running it.
  await sql`
    with source as (
      insert into knowledge_sources (id, project_id, type, title, url, payload, options, status, error, pages_done, pages_total,
        chunks_done, chunk_count, generation, synced_at, created_at, updated_at)
      values (${row.id}, ${row.project_id}, ${row.type}, ${row.title}, ${row.url}, ${row.payload}, ${row.options}, ${row.status},
        ${row.error}, ${row.pages_done}, ${row.pages_total}, ${row.chunks_done}, ${row.chunk_count}, ${row.generation},
        ${row.synced_at}, ${row.created_at}, ${row.updated_at})
      returning id)
    insert into knowledge_jobs (id, source_id, project_id, generation, status, attempts, created_at, updated_at)
    select ${job.id}, source.id, ${job.project_id}, ${job.generation}, ${job.status}, ${job.attempts}, ${job.created_at}, ${job.updated_at}
    from source`.execute(db);
}

const claimable = (at: string) =>
  sql<boolean>`(status = 'queued' or (status = 'running' and lease_until < ${at}))`;

/**
 * No other job of the same source is running: two generations of one source written at once would
 * each delete the other's chunks at their switch. A re-sync queued while its source is being
 * ingested waits for that job to end, also when that job's lease ran out: it is taken over first
 * (the same row, so it stays the one running job) and ends done or failed.
 *
 * This check reads the statement's snapshot, which on PostgreSQL does not show another node's claim
 * before it commits. The unique index `knowledge_jobs_one_running` (migration 016) closes that gap:
 * a second claim waits for the first to commit and then fails with a unique violation.
 */
const noOtherRunning = sql<boolean>`not exists (
    select 1 from knowledge_jobs other
    where other.source_id = knowledge_jobs.source_id and other.id <> knowledge_jobs.id and other.status = 'running')`;

/** Claimable, and may run now. */
const claimableNow = (at: string) => sql<boolean>`(${claimable(at)} and ${noOtherRunning})`;

/** Claims tried on PostgreSQL when each loses to another node's claim of a job of the same source. */
const CLAIM_TRIES = 3;

/** Jobs waiting for a worker on any node: queued, or running under a lease that has run out. */
export async function waitingJobCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('knowledge_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(claimable(now()))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The source's row as a job starts on it. A stored document is one page, known before it is read; a crawl learns its total as it goes. */
const started = (at: string) => ({
  status: 'processing' as const,
  error: null,
  pages_done: 0,
  pages_total: sql<number | null>`case when type in ('url', 'sitemap') then null else 1 end`,
  chunks_done: 0,
  updated_at: at,
});

/** A claimed job, its source (with the payload), and whether this is the job's first run. */
export interface ClaimedJob {
  job: JobRow;
  source: SourceRow;
  /**
   * The job was never claimed before (no attempts, not touched since it was queued), so no chunk
   * of its generation exists and the clean-up before writing can be skipped. A job given back at
   * shutdown or taken over from a dead node is not fresh.
   */
  fresh: boolean;
}

/**
 * Never claimed: what a job looks like between its INSERT and its first claim. A claim sets the
 * lease and a job given back at shutdown keeps it (set to when it was given back); a job requeued
 * by migration 016 was touched after it was queued.
 */
const untouched = sql<boolean>`(attempts = 0 and lease_until is null and updated_at = created_at)`;

/**
 * Claims the oldest claimable job (queued, or running under a lease that has run out: its node
 * died) and marks its source as processing. Exactly one node gets a job: the claim is a conditional
 * UPDATE that re-checks the condition on the row it locked. At most one job of a source runs: a claim
 * that loses to another node's claim of a job of the same source (the unique index on the running
 * jobs' source) is not an error; the claim is tried again, then returns null. The claim's commit
 * does not wait for the disk (a lost claim is redone when its lease runs out).
 *
 * PostgreSQL: one statement. Its candidate is picked `for update skip locked`, so workers claiming
 * at the same moment take different jobs instead of queueing on the same row: the oldest job whose
 * lease ran out, else the oldest queued one, read in the order of an index so the first job that
 * may run ends the read, however long the queue. SQLite: up to five candidates are tried in turn,
 * then the source is updated.
 */
export async function claimJob(db: Db, owner: string, leaseMs: number): Promise<ClaimedJob | null> {
  if (!onSqlite(db)) {
    for (let tries = 1; ; tries++) {
      try {
        return await claimOnPostgres(db, owner, leaseMs);
      } catch (err) {
        // Another node claimed a job of the same source meanwhile, and the statement was rolled back
        // as a whole. That claim is committed now, so the next statement's snapshot skips the source.
        if (!isUniqueViolation(err)) throw err;
        if (tries === CLAIM_TRIES) return null;
      }
    }
  }
  const at = now();
  const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
  const candidates = await db.selectFrom('knowledge_jobs').select(['id', untouched.as('fresh')]).where(claimableNow(at)).orderBy('created_at').limit(5).execute();
  for (const { id, fresh } of candidates) {
    let job: JobRow | undefined;
    try {
      job = await db
        .updateTable('knowledge_jobs')
        .set({ status: 'running', lease_owner: owner, lease_until: leaseUntil, attempts: sql<number>`attempts + 1`, updated_at: at })
        .where('id', '=', id)
        .where(claimableNow(at))
        .returningAll()
        .executeTakeFirst();
    } catch (err) {
      // The index refused it: another job of its source runs. SQLite serialises writes, so the check
      // in the UPDATE sees every claim and this is not expected; it means "not this job, now" all the same.
      if (isUniqueViolation(err)) continue;
      throw err;
    }
    if (!job) continue;
    const source = await db.updateTable('knowledge_sources').set(started(at)).where('id', '=', job.source_id).returningAll().executeTakeFirst();
    // Deleted meanwhile: the cascade removed the job as well.
    return source ? { job, source, fresh: Boolean(fresh) } : null;
  }
  return null;
}

/** The claim on PostgreSQL: one statement (see claimJob). */
async function claimOnPostgres(db: Db, owner: string, leaseMs: number): Promise<ClaimedJob | null> {
  const at = now();
  const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
  const { rows } = await sql<SourceRow & { job: JobRow & { fresh: boolean } }>`
    with pick as (
      select id, ${untouched} as fresh from knowledge_jobs
      where id = coalesce(
        (select id from knowledge_jobs where status = 'running' and lease_until < ${at} and ${noOtherRunning}
          order by created_at limit 1 for update skip locked),
        (select id from knowledge_jobs where status = 'queued' and ${noOtherRunning}
          order by created_at limit 1 for update skip locked))),
    job as (
      update knowledge_jobs set status = 'running', lease_owner = ${owner}, lease_until = ${leaseUntil},
        attempts = attempts + 1, updated_at = ${at}
      from pick
      where knowledge_jobs.id = pick.id and ${claimableNow(at)} and ${withoutFlushWait(db)}
      returning knowledge_jobs.*, pick.fresh)
    update knowledge_sources set status = 'processing', error = null, pages_done = 0,
      pages_total = case when type in ('url', 'sitemap') then null else 1 end, chunks_done = 0, updated_at = ${at}
    from job where knowledge_sources.id = job.source_id
    returning knowledge_sources.*, row_to_json(job) as job`.execute(db);
  const row = rows[0];
  if (!row) return null;
  const { job: { fresh, ...job }, ...source } = row;
  return { job, source, fresh };
}

/** What the source's row shows once the switch made its new generation the visible one. */
export interface SwitchedSource {
  status: 'ready';
  error: string | null;
  generation: string;
  chunk_count: number;
  pages_done: number;
  pages_total: number | null;
  chunks_done: number;
  title: string | null;
  synced_at: string;
  updated_at: string;
}

/** The event a switch of generations puts in the webhook outbox. */
export interface SwitchEvent {
  projectId: string;
  data: Record<string, unknown>;
}

/**
 * The switch of generations, atomically: marks the job done (only while `owner` holds it), makes
 * its generation the source's visible one with the final counts in `shown`, deletes every other
 * generation's chunks, and queues the `knowledge.source.ready` event. Returns false when the job
 * was no longer this owner's (lease lost); then nothing changed. Its commit waits for the disk: a
 * source reported ready survives a crash, and so does every earlier write of the job.
 *
 * PostgreSQL, when the project has no webhook endpoint (checked in the statement itself): one
 * statement. Otherwise, and on SQLite, a transaction that queues the event for the endpoints that
 * take it.
 */
export async function switchGeneration(db: Db, job: JobRow, owner: string, shown: SwitchedSource, event: SwitchEvent): Promise<boolean> {
  const at = shown.updated_at;
  const done = { status: 'done' as const, lease_until: null, error: null, updated_at: at };
  if (!onSqlite(db)) {
    const quiet = withoutEndpoints(event.projectId);
    // SQL text, as the source's INSERT above.
    const { rows } = await sql<{ switched: boolean; quiet: boolean }>`
      with done as (
        update knowledge_jobs set status = 'done', lease_until = null, error = null, updated_at = ${at}
        where id = ${job.id} and lease_owner = ${owner} and ${quiet}
        returning id),
      shown as (
        update knowledge_sources set status = ${shown.status}, error = ${shown.error}, generation = ${shown.generation},
          chunk_count = ${shown.chunk_count}, pages_done = ${shown.pages_done}, pages_total = ${shown.pages_total},
          chunks_done = ${shown.chunks_done}, title = ${shown.title}, synced_at = ${shown.synced_at}, updated_at = ${shown.updated_at}
        where id = ${job.source_id} and exists (select 1 from done)
        returning id),
      old as (
        delete from knowledge_chunks where source_id = ${job.source_id} and generation <> ${job.generation} and exists (select 1 from done))
      select exists (select 1 from done) as switched, ${quiet} as quiet`.execute(db);
    if (rows[0]!.switched) return true;
    // Not switched: the lease is lost, or an endpoint listens and the event must go with the switch.
    if (rows[0]!.quiet) return false;
  }
  return db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('knowledge_jobs').set(done).where('id', '=', job.id).where('lease_owner', '=', owner).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    // The switch: from here on searches see the new generation and only it.
    await trx.updateTable('knowledge_sources').set(shown).where('id', '=', job.source_id).execute();
    await trx.deleteFrom('knowledge_chunks').where('source_id', '=', job.source_id).where('generation', '!=', job.generation).execute();
    await enqueueEvent(trx, event.projectId, 'knowledge.source.ready', event.data);
    return true;
  });
}
