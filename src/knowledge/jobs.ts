import { setImmediate } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import { base62, newId, now } from '../lib/ids.js';
import type { AddressPolicy } from '../net/safe-fetch.js';
import { withoutFlushWait } from '../store/commit.js';
import { isUnavailable } from '../store/faults.js';
import type { Database } from '../store/schema.js';
import { enqueueEvent } from '../webhooks/events.js';
import { ingestSource, type Progress } from './ingest.js';
import type { KnowledgeDeps } from './runtime.js';

/** A crashed attempt is retried this many times in all before the source is marked failed. */
export const MAX_ATTEMPTS = 3;

export interface WorkerOptions {
  /** How long a claim lasts without a heartbeat; a job of a dead node is taken over after it. */
  leaseMs?: number;
  /** How often the queue is checked when nothing woke the worker. */
  pollMs?: number;
  log?: FastifyBaseLogger;
  /** Tests only: see SafeFetchInit.addressPolicy. */
  addressPolicy?: AddressPolicy;
  /**
   * Jobs run at once. PostgreSQL: 3 by default; a job is mostly round trips and work in the server,
   * so one job at a time leaves both this process and the database waiting on each other (a project
   * is often many small sources, one job each). SQLite: 1, its one connection runs one statement at
   * a time anyway.
   */
  concurrency?: number;
  /** Called when this worker is done with a job, however it ended (for the node's metrics). */
  onJobFinished?: (outcome: JobOutcome, seconds: number) => void;
}

/** How a worker was done with a job: finished, failed the source, gave it back at shutdown, lost its lease, or met a database outage. */
export type JobOutcome = 'done' | 'failed' | 'requeued' | 'lease_lost' | 'interrupted';

export interface KnowledgeWorker {
  /** Checks the queue now instead of at the next poll. */
  wake(): void;
  /**
   * Stops claiming and aborts the job in hand, which goes back to the queue (its attempt not
   * counted) for the next worker, on this node after a restart or on another; resolves once it has.
   */
  stop(): Promise<void>;
}

/** Queues an ingestion of `sourceId` into a fresh generation. Runs inside the caller's transaction. */
export async function enqueueIngestion(db: Kysely<Database> | Transaction<Database>, sourceId: string, projectId: string): Promise<void> {
  const at = now();
  await db
    .insertInto('knowledge_jobs')
    .values({
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
    })
    .execute();
}

/**
 * Jobs waiting for a worker on any node: queued, or running under a lease that has run out (their
 * node died). Read at scrape time for the queue-depth gauge.
 */
export async function waitingJobCount(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('knowledge_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(claimable(now()))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether an ingestion of the source is queued or running. */
export async function ingestionPending(db: Kysely<Database>, sourceId: string): Promise<boolean> {
  const active = await db
    .selectFrom('knowledge_jobs')
    .select('id')
    .where('source_id', '=', sourceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return active !== undefined;
}

const claimable = (at: string) =>
  sql<boolean>`(status = 'queued' or (status = 'running' and lease_until < ${at}))`;

/**
 * Claimable, and no other job of the same source runs under a live lease: two generations of one
 * source written at once would each delete the other's chunks at their switch. A re-sync queued
 * while its source is being ingested waits for that job to end.
 */
const claimableNow = (at: string) =>
  sql<boolean>`(${claimable(at)} and not exists (
    select 1 from knowledge_jobs other
    where other.source_id = knowledge_jobs.source_id and other.id <> knowledge_jobs.id
      and other.status = 'running' and other.lease_until >= ${at}))`;

/**
 * Claims the oldest claimable job: queued, or running under a lease that has run out (its node
 * died). The claim is a conditional UPDATE that re-checks the condition on the row itself, so when
 * two nodes race for one job exactly one update matches; the other moves on to the next candidate.
 */
async function claim(db: Kysely<Database>, owner: string, leaseMs: number) {
  const at = now();
  const candidates = await db
    .selectFrom('knowledge_jobs')
    .select('id')
    .where(claimableNow(at))
    .orderBy('created_at')
    .limit(5)
    .execute();
  for (const { id } of candidates) {
    const job = await db
      .updateTable('knowledge_jobs')
      .set({
        status: 'running',
        lease_owner: owner,
        lease_until: new Date(Date.now() + leaseMs).toISOString(),
        attempts: sql`attempts + 1`,
        updated_at: at,
      })
      .where('id', '=', id)
      .where(claimableNow(at))
      .where(withoutFlushWait(db))
      .returningAll()
      .executeTakeFirst();
    if (job) return job;
  }
  return null;
}

type Job = NonNullable<Awaited<ReturnType<typeof claim>>>;

async function failSource(db: Kysely<Database>, job: Job, reason: string): Promise<void> {
  const at = now();
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('knowledge_jobs').set({ status: 'failed', error: reason, lease_until: null, updated_at: at }).where('id', '=', job.id).execute();
    await trx.deleteFrom('knowledge_chunks').where('source_id', '=', job.source_id).where('generation', '=', job.generation).execute();
    const source = await trx
      .updateTable('knowledge_sources')
      .set({ status: 'failed', error: reason, updated_at: at })
      .where('id', '=', job.source_id)
      .returning(['id', 'type', 'title', 'url'])
      .executeTakeFirst();
    if (source) {
      await enqueueEvent(trx, job.project_id, 'knowledge.source.failed', { source: { ...source, projectId: job.project_id, status: 'failed', error: reason } });
    }
  });
}

/**
 * Runs one claimed job: ingests into the job's generation while renewing the lease, then, in one
 * transaction, makes that generation the visible one and drops the previous one. Losing the lease
 * (another node took the job over) aborts the work without touching the source.
 */
/** The worker was stopped (shutdown) while the job ran. */
class WorkerStopped extends Error {}

/**
 * Puts a job that its worker gave up on at shutdown back in the queue. The attempt is not counted:
 * it did not crash. Its half-written generation is cleared by the next attempt.
 */
async function requeue(db: Kysely<Database>, job: Job, owner: string): Promise<void> {
  const at = now();
  await db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('knowledge_jobs')
      .set({ status: 'queued', lease_owner: null, lease_until: null, attempts: sql`attempts - 1`, updated_at: at })
      .where('id', '=', job.id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return;
    await trx.updateTable('knowledge_sources').set({ status: 'pending', updated_at: at }).where('id', '=', job.source_id).execute();
  });
}

async function runJob(
  deps: KnowledgeDeps,
  job: Job,
  owner: string,
  options: Required<Pick<WorkerOptions, 'leaseMs'>> & WorkerOptions,
  stopping: AbortSignal,
): Promise<JobOutcome> {
  const db = deps.store.db;
  if (job.attempts > MAX_ATTEMPTS) {
    const exists = await db.selectFrom('knowledge_sources').select('id').where('id', '=', job.source_id).executeTakeFirst();
    if (!exists) return 'done'; // deleted meanwhile: the cascade removed the job as well
    await failSource(db, job, `Ingestion was interrupted ${MAX_ATTEMPTS} times; giving up (last error: ${job.error ?? 'none'})`);
    return 'failed';
  }
  // A stored document is one page, known before it is read; a crawl learns its total as it goes.
  const source = await db
    .updateTable('knowledge_sources')
    .set({
      status: 'processing',
      error: null,
      pages_done: 0,
      pages_total: sql<number | null>`case when type in ('url', 'sitemap') then null else 1 end`,
      chunks_done: 0,
      updated_at: now(),
    })
    .where('id', '=', job.source_id)
    .where(withoutFlushWait(db))
    .returningAll()
    .executeTakeFirst();
  if (!source) return 'done'; // deleted meanwhile: the cascade removed the job as well
  options.log?.info({ jobId: job.id, sourceId: source.id, worker: owner, attempt: job.attempts }, 'knowledge job claimed');

  const abort = new AbortController();
  const onStop = () => abort.abort(new WorkerStopped('The worker stopped'));
  if (stopping.aborted) onStop();
  else stopping.addEventListener('abort', onStop, { once: true });
  const renew = async () => {
    const res = await db
      .updateTable('knowledge_jobs')
      .set({ lease_until: new Date(Date.now() + options.leaseMs).toISOString() })
      .where('id', '=', job.id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .where(withoutFlushWait(db))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) abort.abort(new Error('lease lost'));
  };
  // What the source's row shows, and the last report (written at the switch if not before).
  let shown: Progress = { pagesDone: 0, pagesTotal: source.pages_total, chunksDone: 0 };
  let latest = shown;
  const heartbeat = setInterval(() => void renew().catch(() => undefined), Math.max(50, options.leaseMs / 3));
  try {
    const runtime = deps.knowledge;
    const result = await ingestSource(source, job.generation, {
      db,
      embedder: runtime.embedder,
      parser: runtime.parser,
      fetch: { allowPrivateNetwork: deps.config.ANSWERDESK_ALLOW_PRIVATE_NETWORK, addressPolicy: options.addressPolicy, signal: abort.signal },
      progress: async (p: Progress) => {
        // Written when it changed, and not for the last page: the switch below writes the final
        // counts in its own commit, so a one-page source costs no progress write at all.
        latest = p;
        if (p.pagesDone === shown.pagesDone && p.pagesTotal === shown.pagesTotal && p.chunksDone === shown.chunksDone) return;
        if (p.pagesTotal !== null && p.pagesDone >= p.pagesTotal) return;
        shown = p;
        await db
          .updateTable('knowledge_sources')
          .set({ pages_done: p.pagesDone, pages_total: p.pagesTotal, chunks_done: p.chunksDone, updated_at: now() })
          .where('id', '=', source.id)
          .where(withoutFlushWait(db))
          .execute();
      },
    });
    clearInterval(heartbeat);
    const at = now();
    await db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('knowledge_jobs')
        .set({ status: 'done', lease_until: null, error: null, updated_at: at })
        .where('id', '=', job.id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) throw new Error('lease lost');
      // The switch: from here on searches see the new generation and only it.
      await trx
        .updateTable('knowledge_sources')
        .set({
          status: 'ready',
          error: result.failures.length ? `${result.failures.length} page(s) skipped; first: ${result.failures[0]!.url}: ${result.failures[0]!.reason}` : null,
          generation: job.generation,
          chunk_count: result.chunks,
          pages_done: latest.pagesDone,
          pages_total: latest.pagesTotal,
          chunks_done: latest.chunksDone,
          title: source.title ?? result.firstTitle,
          synced_at: at,
          updated_at: at,
        })
        .where('id', '=', source.id)
        .execute();
      await trx.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).where('generation', '!=', job.generation).execute();
      await enqueueEvent(trx, source.project_id, 'knowledge.source.ready', {
        source: {
          id: source.id,
          projectId: source.project_id,
          type: source.type,
          title: source.title ?? result.firstTitle,
          url: source.url,
          status: 'ready',
          chunkCount: result.chunks,
          pagesSkipped: result.failures.length,
          syncedAt: at,
        },
      });
    });
    // This node's searches learn the new content at once; other nodes within seconds (see search/index.ts).
    runtime.search.forget(source.project_id);
    return 'done';
  } catch (err) {
    clearInterval(heartbeat);
    if (abort.signal.reason instanceof WorkerStopped) {
      options.log?.info({ jobId: job.id, sourceId: source.id }, 'knowledge job stopped at shutdown; it is queued again');
      await requeue(db, job, owner);
      return 'requeued';
    }
    if (abort.signal.aborted) {
      options.log?.warn({ jobId: job.id }, 'knowledge job lease lost; another node continues it');
      return 'lease_lost';
    }
    if (isUnavailable(err)) {
      // Not the source's fault: the job is retried once its lease runs out (counted as an attempt).
      options.log?.warn({ jobId: job.id, sourceId: source.id, err: { message: (err as Error).message } }, 'knowledge ingestion interrupted: database unavailable');
      return 'interrupted';
    }
    const reason = (err as Error).message || 'Ingestion failed';
    options.log?.warn({ jobId: job.id, sourceId: source.id, reason }, 'knowledge ingestion failed');
    await failSource(db, job, reason);
    return 'failed';
  } finally {
    stopping.removeEventListener('abort', onStop);
  }
}

/**
 * Starts the in-process ingestion worker: claims queued jobs from the database one at a time (any
 * number of nodes may run one against the same PostgreSQL), and on start picks up jobs whose node
 * died mid-way once their lease has run out.
 */
export function startKnowledgeWorker(deps: KnowledgeDeps, options: WorkerOptions = {}): KnowledgeWorker {
  const opts = { leaseMs: 30_000, pollMs: 1_000, ...options };
  const concurrency = Math.max(1, options.concurrency ?? (deps.store.dialect === 'postgres' ? 3 : 1));
  const owner = `worker_${base62(12)}`;
  let running = true;
  let databaseDown = false;
  const stopping = new AbortController();
  let wakeUp: (() => void) | null = null;
  let pending = false;
  const wake = () => {
    pending = true;
    wakeUp?.();
  };
  const unsubscribe = deps.knowledge.jobQueued.subscribe(wake);
  const active = new Set<Promise<void>>();
  const start = (job: Job) => {
    const started = performance.now();
    const done: Promise<void> = runJob(deps, job, owner, opts, stopping.signal)
      .then(
        (outcome) => opts.onJobFinished?.(outcome, (performance.now() - started) / 1000),
        (err) => {
          if (!isUnavailable(err)) opts.log?.error({ err }, 'knowledge worker error');
        },
      )
      .finally(() => {
        active.delete(done);
        // A slot is free: look at the queue again at once.
        wake();
      });
    active.add(done);
  };

  const loop = (async () => {
    while (running) {
      pending = false;
      // A wake-up comes from the request that queued the job; claim it in a later turn of the
      // event loop rather than in the same one (SQLite would run both back to back).
      await setImmediate();
      if (active.size < concurrency) {
        try {
          const job = await claim(deps.store.db, owner, opts.leaseMs);
          databaseDown = false;
          if (job && running) {
            start(job);
            // With one slot, the job is run to its end before the queue is read again.
            if (active.size >= concurrency) await Promise.race(active);
            continue;
          }
        } catch (err) {
          if (!running) break;
          // During a database outage every poll fails: say so once, not once a second.
          if (!isUnavailable(err)) opts.log?.error({ err }, 'knowledge worker error');
          else if (!databaseDown) opts.log?.warn({ err: { message: (err as Error).message } }, 'knowledge worker waits for the database');
          databaseDown = isUnavailable(err);
        }
      }
      if (!running || pending) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, opts.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
    await Promise.all(active);
  })();

  return {
    wake,
    async stop() {
      running = false;
      stopping.abort();
      unsubscribe();
      wakeUp?.();
      await loop;
    },
  };
}
