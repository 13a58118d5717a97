import { setImmediate } from 'node:timers/promises';
import { SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import { newId } from '../lib/ids.js';
import { storable, storableDeep } from '../lib/nul.js';
import { withoutFlushWait } from '../store/commit.js';
import type { Database, KnowledgeChunksTable, KnowledgeSourcesTable } from '../store/schema.js';
import { crawl, crawlSitemap, type FetchContext, type PageFailure } from './crawl.js';
import type { Embedder } from './embeddings.js';
import type { ParsedDocument } from './parse.js';
import type { DocumentParser } from './parser.js';
import type { ChunkDraft, CrawlOptions } from './types.js';

export type SourceRow = Selectable<KnowledgeSourcesTable>;

export interface Progress {
  pagesDone: number;
  pagesTotal: number | null;
  chunksDone: number;
}

export interface IngestContext {
  db: Kysely<Database>;
  embedder: Embedder | null;
  /** Reads documents and pages into chunks (all but small plain text and FAQs off the main thread). */
  parser: DocumentParser;
  fetch: FetchContext;
  /** Called after each page is stored, within a long page after each batch of chunks, and when the page total becomes known. */
  progress(p: Progress): Promise<void>;
  /** No earlier attempt can have left chunks under the generation (a job's first run): the clean-up is skipped. */
  fresh?: boolean;
}

export interface IngestResult {
  chunks: number;
  pages: number;
  /** The first page's title, used as the source title when none was given. */
  firstTitle: string | null;
  failures: PageFailure[];
}

/** Rows per INSERT on SQLite: 11 parameters a row, well under its bound-parameter limit (32,766). */
const SQLITE_INSERT_BATCH = 200;
/**
 * Chunks embedded and written between two progress reports inside one page: a long document is
 * one page, and its embeddings are the slow part, so progress moves while they are made. Large
 * enough that the embedding calls stay batched (embedMany splits and parallelises within it).
 */
const PROGRESS_BATCH = 1000;
export const DEFAULT_CRAWL: CrawlOptions = { maxDepth: 2, maxPages: 50 };

/** The pages of a source, read from its stored payload or fetched from the web, each in chunks. */
async function* pagesOf(source: SourceRow, ctx: IngestContext, failures: PageFailure[], onTotal: (n: number | null) => Promise<void>): AsyncGenerator<ParsedDocument> {
  const options = { ...DEFAULT_CRAWL, ...(JSON.parse(source.options) as Partial<CrawlOptions>) };
  const events = { onTotal, onFailure: (f: PageFailure) => void failures.push(storableDeep(f)) };
  const crawling = { ...ctx.fetch, parse: (input: Parameters<DocumentParser['parse']>[0]) => ctx.parser.parse(input, ctx.fetch.signal) };
  switch (source.type) {
    case 'url':
      yield* crawl(source.url!, options, crawling, events);
      return;
    case 'sitemap':
      yield* crawlSitemap(source.url!, options, crawling, events);
      return;
    default:
      await onTotal(1);
      yield await ctx.parser.parse({ kind: 'stored', type: source.type, payload: source.payload ?? '', title: source.title ?? '' }, ctx.fetch.signal);
  }
}

/** Embeds and writes a page's chunks, `PROGRESS_BATCH` at a time, calling `written` after each batch. */
async function writeChunks(
  ctx: IngestContext,
  source: SourceRow,
  generation: string,
  drafts: ChunkDraft[],
  firstPosition: number,
  written: (count: number) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < drafts.length; i += PROGRESS_BATCH) {
    const batch = drafts.slice(i, i + PROGRESS_BATCH);
    await writeChunkBatch(ctx, source, generation, batch, firstPosition + i);
    await written(batch.length);
  }
}

async function writeChunkBatch(ctx: IngestContext, source: SourceRow, generation: string, drafts: ChunkDraft[], firstPosition: number): Promise<void> {
  const vectors = ctx.embedder
    ? await ctx.embedder.embed(drafts.map((d) => [d.title, ...d.headingPath, d.text].join('\n')), ctx.fetch.signal)
    : null;
  const rows = drafts.map((d, i) => ({
    id: newId('chunk'),
    project_id: source.project_id,
    source_id: source.id,
    generation,
    position: firstPosition + i,
    title: d.title,
    heading_path: JSON.stringify(d.headingPath),
    headings: d.headingPath.join(' > '),
    url: d.url,
    text: d.text,
    embedding: vectors ? JSON.stringify(vectors[i]) : null,
  }));
  await insertChunks(ctx.db, rows);
}

/** A chunk row as written (the database numbers it). */
export type NewChunk = Omit<Selectable<KnowledgeChunksTable>, 'rowid'>;

/**
 * Writes chunks, any number, with U+0000 removed from their text (neither database's text type
 * holds it; the parser already drops it, this is the last line).
 *
 * PostgreSQL: one INSERT for the whole batch, its columns sent as arrays and spread by `unnest`,
 * so a statement has 11 parameters whatever the batch size (the protocol allows 65,535: a
 * multi-row VALUES list of 11 columns stops at 5,957 rows), and the server parses and plans it
 * once. The chunks of one write share their project, source and generation, sent once.
 *
 * Its commit does not wait for the disk (see withoutFlushWait): the chunks are not searchable before
 * the job's switch of generations, whose commit does, and a lost write is redone by the retry.
 *
 * SQLite: multi-row INSERTs of 200 rows; its driver answers synchronously, so the event loop gets
 * a turn after each (a 19 MB document is ~45,000 chunks, seconds of inserts).
 */
export async function insertChunks(db: Kysely<Database>, chunks: NewChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  const rows = chunks.map((c) => ({
    ...c,
    title: storable(c.title),
    heading_path: storable(c.heading_path),
    headings: storable(c.headings),
    url: c.url === null ? null : storable(c.url),
    text: storable(c.text),
  }));
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    for (let i = 0; i < rows.length; i += SQLITE_INSERT_BATCH) {
      await db.insertInto('knowledge_chunks').values(rows.slice(i, i + SQLITE_INSERT_BATCH)).execute();
      await setImmediate();
    }
    return;
  }
  // Rows of several sources (or generations) are grouped, each group one statement.
  const groups = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = JSON.stringify([row.project_id, row.source_id, row.generation]);
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  for (const group of groups.values()) {
    const { project_id, source_id, generation } = group[0]!;
    const column = <K extends keyof (typeof group)[number]>(key: K) => group.map((r) => r[key]);
    await sql`
      insert into knowledge_chunks (id, project_id, source_id, generation, position, title, heading_path, headings, url, text, embedding)
      select u.id, ${project_id}, ${source_id}, ${generation}, u.position, u.title, u.heading_path, u.headings, u.url, u.text, u.embedding
      from unnest(${column('id')}::text[], ${column('position')}::integer[], ${column('title')}::text[], ${column('heading_path')}::text[],
                  ${column('headings')}::text[], ${column('url')}::text[], ${column('text')}::text[], ${column('embedding')}::text[])
        as u(id, position, title, heading_path, headings, url, text, embedding)
      where ${withoutFlushWait(db)}`.execute(db);
  }
}

/** Why a source that was read gave no text at all, with what would help. */
function noTextReason(type: SourceRow['type'], pagesRead: number): string {
  // Not a page without text: none was read (a sitemap of www.example.com served at example.com).
  if (type === 'sitemap' && pagesRead === 0) return 'The sitemap lists no page of its own site: only pages at its own scheme, host and port are read';
  if (type === 'pdf') return 'The PDF holds no text: a scanned document holds pictures of its pages; run it through text recognition (OCR) first';
  if (type === 'url' || type === 'sitemap') return 'The pages read hold no text: a page whose text is put in by JavaScript in the browser has none until then';
  return 'The document holds no text';
}

/**
 * Reads every page of a source, chunks it and writes the chunks under `generation`. Chunks already
 * written under that generation by an interrupted attempt are removed first (unless `ctx.fresh`
 * says there can be none), so a retry starts clean. Nothing here makes the chunks visible: the
 * caller switches the source's generation once this returns.
 */
export async function ingestSource(source: SourceRow, generation: string, ctx: IngestContext): Promise<IngestResult> {
  await setImmediate();
  if (!ctx.fresh) await ctx.db.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).where('generation', '=', generation).where(withoutFlushWait(ctx.db)).execute();
  const failures: PageFailure[] = [];
  const progress: Progress = { pagesDone: 0, pagesTotal: null, chunksDone: 0 };
  let firstTitle: string | null = null;
  // Each report rewrites the source's row, which holds the whole document (tens of milliseconds
  // for a large one on SQLite, which answers synchronously): let the event loop in after it.
  const report = async () => {
    await ctx.progress({ ...progress });
    await setImmediate();
  };
  const onTotal = async (total: number | null) => {
    progress.pagesTotal = total;
    await report();
  };
  for await (const page of pagesOf(source, ctx, failures, onTotal)) {
    ctx.fetch.signal.throwIfAborted();
    firstTitle ??= page.title;
    const drafts = page.chunks;
    let left = drafts.length;
    await writeChunks(ctx, source, generation, drafts, progress.chunksDone, async (count) => {
      progress.chunksDone += count;
      left -= count;
      // The page's end is reported below; within a long page, each batch is.
      if (left > 0) await report();
    });
    progress.pagesDone++;
    await report();
  }
  if (progress.pagesDone === 0 && failures.length > 0) {
    throw new Error(failures[0]!.reason);
  }
  // Ready with nothing to search would look fine in every list while the agent could never answer
  // from it: the source fails, saying why (and a sync keeps the content it had).
  if (progress.chunksDone === 0) throw new Error(noTextReason(source.type, progress.pagesDone));
  return { chunks: progress.chunksDone, pages: progress.pagesDone, firstTitle, failures };
}
