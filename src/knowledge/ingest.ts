import { setImmediate } from 'node:timers/promises';
import type { Kysely, Selectable } from 'kysely';
import { newId } from '../lib/ids.js';
import { stripNulDeep } from '../lib/nul.js';
import type { Database, KnowledgeSourcesTable } from '../store/schema.js';
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
  /** Reads documents and pages into chunks (large ones off the main thread). */
  parser: DocumentParser;
  fetch: FetchContext;
  /** Called after each page is stored, within a long page after each batch of chunks, and when the page total becomes known. */
  progress(p: Progress): Promise<void>;
}

export interface IngestResult {
  chunks: number;
  pages: number;
  /** The first page's title, used as the source title when none was given. */
  firstTitle: string | null;
  failures: PageFailure[];
}

/** Rows per INSERT: well under SQLite's bound-parameter limit, large enough to amortise round trips. */
const INSERT_BATCH = 200;
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
  const events = { onTotal, onFailure: (f: PageFailure) => void failures.push(stripNulDeep(f)) };
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
  for (let i = 0; i < drafts.length; i += INSERT_BATCH) {
    const rows = drafts.slice(i, i + INSERT_BATCH).map((d, j) => ({
      id: newId('chunk'),
      project_id: source.project_id,
      source_id: source.id,
      generation,
      position: firstPosition + i + j,
      title: d.title,
      heading_path: JSON.stringify(d.headingPath),
      headings: d.headingPath.join(' > '),
      url: d.url,
      text: d.text,
      embedding: vectors ? JSON.stringify(vectors[i + j]) : null,
    }));
    await ctx.db.insertInto('knowledge_chunks').values(rows).execute();
    // SQLite answers synchronously, so a run of inserts would never let the event loop in: give it
    // a turn after each batch (a 19 MB document is ~45,000 chunks, seconds of inserts).
    await setImmediate();
  }
}

/**
 * Reads every page of a source, chunks it and writes the chunks under `generation`. Chunks already
 * written under that generation by an interrupted attempt are removed first, so a retry starts
 * clean. Nothing here makes the chunks visible: the caller switches the source's generation once
 * this returns.
 */
export async function ingestSource(source: SourceRow, generation: string, ctx: IngestContext): Promise<IngestResult> {
  await setImmediate();
  await ctx.db.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).where('generation', '=', generation).execute();
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
  return { chunks: progress.chunksDone, pages: progress.pagesDone, firstTitle, failures };
}
