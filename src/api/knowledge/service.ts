import type { Kysely, Selectable } from 'kysely';
import type { AppDeps } from '../../http/context.js';
import { BadRequest, NotFound } from '../../lib/errors.js';
import { newId, now } from '../../lib/ids.js';
import { enqueueIngestion } from '../../knowledge/jobs.js';
import { knowledgeFor } from '../../knowledge/runtime.js';
import type { SourceType } from '../../knowledge/types.js';
import type { Database, KnowledgeSourcesTable } from '../../store/schema.js';
import type { CreateSourceBody, KnowledgeSource } from './schema.js';

type Db = Kysely<Database>;
type Row = Selectable<KnowledgeSourcesTable>;

export function toSource(row: Row): KnowledgeSource {
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    title: row.title,
    url: row.url,
    status: row.status,
    error: row.error,
    progress: { pagesDone: row.pages_done, pagesTotal: row.pages_total, chunksDone: row.chunks_done },
    chunkCount: row.chunk_count,
    syncedAt: row.synced_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What a new source is made of, whichever way it arrived (JSON body or uploaded file). */
export interface NewSource {
  type: SourceType;
  title?: string;
  url?: string;
  /** Text, Markdown, HTML, JSON FAQ items, or base64 PDF bytes. */
  payload?: string;
  options?: { maxDepth?: number; maxPages?: number };
}

/** The stored form of a JSON create body. */
export function fromBody(body: CreateSourceBody): NewSource {
  return {
    type: body.type,
    title: body.title,
    url: body.url,
    payload: body.type === 'faq' ? JSON.stringify(body.items) : body.content,
    options: body.type === 'url' ? { maxDepth: body.maxDepth ?? 0, maxPages: body.maxPages } : { maxPages: body.maxPages },
  };
}

/** Stores a source as pending and queues its ingestion, in one transaction; wakes a local worker. */
export async function createSource(deps: AppDeps, projectId: string, input: NewSource): Promise<KnowledgeSource> {
  const at = now();
  const row: Row = {
    id: newId('ks'),
    project_id: projectId,
    type: input.type,
    title: input.title ?? null,
    url: input.url ?? null,
    payload: input.payload ?? null,
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
  await deps.store.db.transaction().execute(async (trx) => {
    await trx.insertInto('knowledge_sources').values(row).execute();
    await enqueueIngestion(trx, row.id, projectId);
  });
  knowledgeFor(deps).wakeWorker?.();
  return toSource(row);
}

const listColumns = [
  'id', 'project_id', 'type', 'title', 'url', 'options', 'status', 'error', 'pages_done', 'pages_total',
  'chunks_done', 'chunk_count', 'generation', 'synced_at', 'created_at', 'updated_at',
] as const;

/** A project's sources, newest first (the stored content is not read). */
export async function listSources(db: Db, projectId: string): Promise<KnowledgeSource[]> {
  const rows = await db
    .selectFrom('knowledge_sources')
    .select(listColumns)
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => toSource({ ...r, payload: null }));
}

async function getRow(db: Db, projectId: string, sourceId: string) {
  const row = await db
    .selectFrom('knowledge_sources')
    .select(listColumns)
    .where('id', '=', sourceId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw NotFound('Knowledge source not found');
  return { ...row, payload: null };
}

export async function getSource(db: Db, projectId: string, sourceId: string): Promise<KnowledgeSource> {
  return toSource(await getRow(db, projectId, sourceId));
}

/** Deletes a source; its chunks (and their index entries) and jobs go with it by cascade. */
export async function deleteSource(db: Db, projectId: string, sourceId: string): Promise<void> {
  await getRow(db, projectId, sourceId);
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('knowledge_chunks').where('source_id', '=', sourceId).execute();
    await trx.deleteFrom('knowledge_sources').where('id', '=', sourceId).execute();
  });
}

/**
 * Fetches a URL or sitemap source again. The current content stays searchable until the new one is
 * complete. A sync while one is already queued or running returns the source as it is.
 */
export async function syncSource(deps: AppDeps, projectId: string, sourceId: string): Promise<KnowledgeSource> {
  const db = deps.store.db;
  const row = await getRow(db, projectId, sourceId);
  if (row.type !== 'url' && row.type !== 'sitemap') throw BadRequest('Only url and sitemap sources can be synced');
  const active = await db
    .selectFrom('knowledge_jobs')
    .select('id')
    .where('source_id', '=', sourceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  if (!active) {
    await db.transaction().execute(async (trx) => {
      await enqueueIngestion(trx, sourceId, projectId);
      await trx.updateTable('knowledge_sources').set({ status: 'pending', updated_at: now() }).where('id', '=', sourceId).execute();
    });
    knowledgeFor(deps).wakeWorker?.();
  }
  return getSource(db, projectId, sourceId);
}

/** Ranked passages of one project's ready sources, each with its source's id, type and title. */
export async function searchKnowledge(deps: AppDeps, projectId: string, query: string, limit: number) {
  const hits = await knowledgeFor(deps).search.search(projectId, query, limit);
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
