import type { Kysely, Transaction } from 'kysely';
import { BadRequest, NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { storable } from '../lib/nul.js';
import { projectGone, retryDeadlock } from '../store/index.js';
import { lockRow } from '../store/lock.js';
import type { Database } from '../store/schema.js';
import type { SourceRow } from './ingest.js';
import { deleteSourceJobs, insertSourceWithJob } from './job-store.js';
import { enqueueIngestion, ingestionPending } from './jobs.js';
import type { KnowledgeDeps } from './runtime.js';
import type { KnowledgeHit, SourceType } from './types.js';

type Db = Kysely<Database>;
export type { SourceRow } from './ingest.js';

/** What a new source is made of, whichever way it arrived (JSON body, uploaded file, CLI). */
export interface NewSource {
  type: SourceType;
  title?: string;
  url?: string;
  /** Text, Markdown, HTML, JSON FAQ items, or base64 PDF bytes. */
  payload?: string;
  options?: {
    maxDepth?: number;
    maxPages?: number;
    /** `answers`: the project's answers source (faq.ts), at most one per project. Never from a request. */
    role?: 'answers';
  };
}

/**
 * Stores a source as pending and queues its ingestion, in one transaction; wakes this process's
 * ingestion workers. U+0000 in an uploaded file's content or name (JSON input never gets here with
 * it) is dropped: PostgreSQL cannot store it, and in a text file it is noise (a UTF-16 file read as
 * UTF-8).
 */
export async function createSource(deps: KnowledgeDeps, projectId: string, input: NewSource): Promise<SourceRow> {
  const at = now();
  const row: SourceRow = {
    id: newId('ks'),
    project_id: projectId,
    type: input.type,
    title: input.title === undefined ? null : storable(input.title) || null,
    url: input.url ?? null,
    payload: input.payload === undefined ? null : storable(input.payload),
    options: JSON.stringify(Object.fromEntries(Object.entries(input.options ?? {}).filter(([, v]) => v !== undefined))),
    status: 'pending',
    error: null,
    pages_done: 0,
    pages_total: null,
    chunks_done: 0,
    chunk_count: 0,
    generation: null,
    synced_at: null,
    created_at: at,
    updated_at: at,
  };
  await insertSourceWithJob(deps.store.db, row).catch((err: unknown) => {
    // The project was deleted since the route found it.
    throw projectGone(err);
  });
  deps.knowledge.jobQueued.notify();
  return row;
}

const listColumns = [
  'id', 'project_id', 'type', 'title', 'url', 'options', 'status', 'error', 'pages_done', 'pages_total',
  'chunks_done', 'chunk_count', 'generation', 'synced_at', 'created_at', 'updated_at',
] as const;

/** A project's sources, newest first; the stored content is not read (`payload` is null). */
export async function listSources(db: Db, projectId: string): Promise<SourceRow[]> {
  const rows = await db
    .selectFrom('knowledge_sources')
    .select(listColumns)
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({ ...r, payload: null }));
}

/** A source of the project without its content (`payload` is null), or 404. */
export async function getSource(db: Db, projectId: string, sourceId: string): Promise<SourceRow> {
  const row = await db
    .selectFrom('knowledge_sources')
    .select(listColumns)
    .where('id', '=', sourceId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw NotFound('Knowledge source not found');
  return { ...row, payload: null };
}

/** Deletes a source; its chunks (and their index entries) and jobs go with it by cascade. */
export async function deleteSource(db: Db, projectId: string, sourceId: string, alsoDelete?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await getSource(db, projectId, sourceId);
  // Two deletes and a sync of one source at once can still meet in a deadlock on PostgreSQL: the
  // sync's new job, committed between the two deletes' own job deletes, is held by the second while
  // the first's cascade from the source's row needs it. The victim was rolled back whole and runs
  // again (finding the source gone: 404).
  await retryDeadlock(() => deleteSourceOnce(db, sourceId, alsoDelete));
}

async function deleteSourceOnce(db: Db, sourceId: string, alsoDelete?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Jobs first, then the source (the order a claim locks them in; see deleteSourceJobs). Two
    // deletes at once: the second finds the source gone (404), as it would one after the other.
    await deleteSourceJobs(trx, sourceId);
    await trx.deleteFrom('knowledge_chunks').where('source_id', '=', sourceId).execute();
    const deleted = await trx.deleteFrom('knowledge_sources').where('id', '=', sourceId).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw NotFound('Knowledge source not found');
    // What refers to the source elsewhere goes with it, in the same transaction.
    await alsoDelete?.(trx);
  });
}

/**
 * Runs `write` in a transaction that holds the source's row, for a write elsewhere that names the
 * source: a delete of the source at the same moment waits for it, and then sees what it wrote (and
 * undoes it with the rest: deleteSource's `alsoDelete`), or came first; then `write` does not run
 * and the answer is null.
 */
export async function whileSourceExists<T>(db: Db, sourceId: string, write: (trx: Transaction<Database>) => Promise<T>): Promise<T | null> {
  return db.transaction().execute(async (trx) => ((await lockRow(trx, 'knowledge_sources', sourceId)) ? write(trx) : null));
}

/**
 * Fetches a URL or sitemap source again. The current content stays searchable until the new one is
 * complete. A sync while one is already queued or running returns the source as it is.
 */
export async function syncSource(deps: KnowledgeDeps, projectId: string, sourceId: string): Promise<SourceRow> {
  const db = deps.store.db;
  const row = await getSource(db, projectId, sourceId);
  if (row.type !== 'url' && row.type !== 'sitemap') throw BadRequest('Only url and sitemap sources can be synced');
  // Under the source's lock: a delete at the same time either comes first (404) or waits for the
  // sync and then removes its job by cascade, and two syncs at once queue one job. The deadlock that
  // two deletes and a sync can still meet (deleteSource) may pick the sync as its victim: it runs
  // again, and finds the source gone (404).
  const queued = await retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      if (!(await lockRow(trx, 'knowledge_sources', sourceId))) throw NotFound('Knowledge source not found');
      if (await ingestionPending(trx, sourceId)) return false;
      await enqueueIngestion(trx, sourceId, projectId);
      await trx.updateTable('knowledge_sources').set({ status: 'pending', updated_at: now() }).where('id', '=', sourceId).execute();
      return true;
    }),
  );
  if (queued) deps.knowledge.jobQueued.notify();
  return getSource(db, projectId, sourceId);
}

/** A search hit with the id, type and title of its source. */
export type SourcedHit = KnowledgeHit & { source: { id: string; type: SourceType; title: string | null } };

/** Ranked passages of one project's ready sources, each with its source's id, type and title. */
export async function searchWithSources(deps: KnowledgeDeps, projectId: string, query: string, limit: number): Promise<SourcedHit[]> {
  const hits = await deps.knowledge.search.search(projectId, query, limit);
  const ids = [...new Set(hits.map((h) => h.sourceId))];
  const sources = ids.length
    ? await deps.store.db.selectFrom('knowledge_sources').select(['id', 'type', 'title']).where('id', 'in', ids).execute()
    : [];
  const byId = new Map(sources.map((s) => [s.id, s]));
  return hits.map((h) => {
    const s = byId.get(h.sourceId);
    return { ...h, source: { id: h.sourceId, type: s?.type ?? 'text', title: s?.title ?? null } };
  });
}
