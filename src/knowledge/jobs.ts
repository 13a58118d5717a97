import { setImmediate } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { base62, now } from '../lib/ids.js';
import type { AddressPolicy } from '../net/safe-fetch.js';
import { withoutFlushWait } from '../store/commit.js';
import { isUnavailable } from '../store/faults.js';
import type { Database } from '../store/schema.js';
import { enqueueEvent } from '../webhooks/events.js';
import { ingestSource, type Progress } from './ingest.js';
import { claimJob, switchGeneration, type ClaimedJob, type JobRow } from './job-store.js';
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

export { enqueueIngestion, waitingJobCount } from './job-store.js';

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

/**
 * Marks the job and its source failed and drops the job's generation, while `owner` holds the job:
 * a job another node took over is that node's to finish (and its chunks are in that generation).
 * Returns the outcome: `lease_lost` when the job was no longer this owner's.
 */
async function failSource(db: Kysely<Database>, job: JobRow, owner: string, reason: string): Promise<JobOutcome> {
  const at = now();
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('knowledge_jobs')
      .set({ status: 'failed', error: reason, lease_until: null, updated_at: at })
      .where('id', '=', job.id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return 'lease_lost';
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
    return 'failed';
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
 * it did not crash. Its half-written generation is cleared by the next attempt, which knows it is
 * not the first by the lease kept here: attempts and times alone can read as never claimed when the
 * job is given back in the millisecond it was queued (clocks of two nodes differ).
 */
async function requeue(db: Kysely<Database>, job: JobRow, owner: string): Promise<void> {
  const at = now();
  await db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('knowledge_jobs')
      .set({ status: 'queued', lease_owner: null, lease_until: at, attempts: sql`attempts - 1`, updated_at: at })
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
  { job, source, fresh }: ClaimedJob,
  owner: string,
  options: Required<Pick<WorkerOptions, 'leaseMs'>> & WorkerOptions,
  stopping: AbortSignal,
): Promise<JobOutcome> {
  const db = deps.store.db;
  if (job.attempts > MAX_ATTEMPTS) {
    return failSource(db, job, owner, `Ingestion was interrupted ${MAX_ATTEMPTS} times; giving up (last error: ${job.error ?? 'none'})`);
  }
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
  const leaseLost = (): JobOutcome => {
    options.log?.warn({ jobId: job.id }, 'knowledge job lease lost; another node continues it');
    return 'lease_lost';
  };
  const heartbeat = setInterval(() => void renew().catch(() => undefined), Math.max(50, options.leaseMs / 3));
  try {
    const runtime = deps.knowledge;
    const result = await ingestSource(source, job.generation, {
      db,
      embedder: runtime.embedder,
      parser: runtime.parser,
      fresh,
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
    const title = source.title ?? result.firstTitle;
    const switched = await switchGeneration(
      db,
      job,
      owner,
      {
        status: 'ready',
        error: result.failures.length ? `${result.failures.length} page(s) skipped; first: ${result.failures[0]!.url}: ${result.failures[0]!.reason}` : null,
        generation: job.generation,
        chunk_count: result.chunks,
        pages_done: latest.pagesDone,
        pages_total: latest.pagesTotal,
        chunks_done: latest.chunksDone,
        title,
        synced_at: at,
        updated_at: at,
      },
      {
        projectId: source.project_id,
        data: {
          source: {
            id: source.id,
            projectId: source.project_id,
            type: source.type,
            title,
            url: source.url,
            status: 'ready',
            chunkCount: result.chunks,
            pagesSkipped: result.failures.length,
            syncedAt: at,
          },
        },
      },
    );
    // Not switched: another node took the job over (this one stalled past its lease), and it is that
    // node's to finish. Not an ingestion failure: failing the source would fail that node's job and drop its chunks.
    if (!switched) return leaseLost();
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
    if (abort.signal.aborted) return leaseLost();
    if (isUnavailable(err)) {
      // Not the source's fault: the job is retried once its lease runs out (counted as an attempt).
      options.log?.warn({ jobId: job.id, sourceId: source.id, err: { message: (err as Error).message } }, 'knowledge ingestion interrupted: database unavailable');
      return 'interrupted';
    }
    const reason = (err as Error).message || 'Ingestion failed';
    options.log?.warn({ jobId: job.id, sourceId: source.id, reason }, 'knowledge ingestion failed');
    return failSource(db, job, owner, reason);
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
  const start = (claimed: ClaimedJob) => {
    const started = performance.now();
    const done: Promise<void> = runJob(deps, claimed, owner, opts, stopping.signal)
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
          const claimed = await claimJob(deps.store.db, owner, opts.leaseMs);
          databaseDown = false;
          if (claimed && running) {
            start(claimed);
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
