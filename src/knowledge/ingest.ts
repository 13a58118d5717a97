import type { Kysely, Selectable } from 'kysely';
import { newId } from '../lib/ids.js';
import type { Database, KnowledgeSourcesTable } from '../store/schema.js';
import { chunkPage } from './chunk.js';
import { crawl, crawlSitemap, type FetchContext, type PageFailure } from './crawl.js';
import type { Embedder } from './embeddings.js';
import { faqToPage, htmlToPage, markdownToPage, pdfToPage, textToPage } from './extract.js';
import type { ChunkDraft, CrawlOptions, Page } from './types.js';

export type SourceRow = Selectable<KnowledgeSourcesTable>;

export interface Progress {
  pagesDone: number;
  pagesTotal: number | null;
  chunksDone: number;
}

export interface IngestContext {
  db: Kysely<Database>;
  embedder: Embedder | null;
  fetch: FetchContext;
  /** Called after each page is stored (and when the page total becomes known). */
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
export const DEFAULT_CRAWL: CrawlOptions = { maxDepth: 2, maxPages: 50 };

/** The pages of a source, read from its stored payload or fetched from the web. */
async function* pagesOf(source: SourceRow, ctx: IngestContext, failures: PageFailure[], onTotal: (n: number | null) => Promise<void>): AsyncGenerator<Page> {
  const title = source.title ?? '';
  const payload = source.payload ?? '';
  const options = { ...DEFAULT_CRAWL, ...(JSON.parse(source.options) as Partial<CrawlOptions>) };
  const events = { onTotal, onFailure: (f: PageFailure) => void failures.push(f) };
  switch (source.type) {
    case 'text':
      await onTotal(1);
      yield textToPage(payload, title || 'Text');
      return;
    case 'markdown':
      await onTotal(1);
      yield markdownToPage(payload, title);
      return;
    case 'html':
      await onTotal(1);
      yield htmlToPage(payload, null, title);
      return;
    case 'pdf':
      await onTotal(1);
      yield await pdfToPage(new Uint8Array(Buffer.from(payload, 'base64')), title);
      return;
    case 'faq':
      await onTotal(1);
      yield faqToPage(JSON.parse(payload) as Array<{ question: string; answer: string }>, title);
      return;
    case 'url':
      yield* crawl(source.url!, options, ctx.fetch, events);
      return;
    case 'sitemap':
      yield* crawlSitemap(source.url!, options, ctx.fetch, events);
      return;
  }
}

async function writeChunks(ctx: IngestContext, source: SourceRow, generation: string, drafts: ChunkDraft[], firstPosition: number): Promise<void> {
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
  }
}

/**
 * Reads every page of a source, chunks it and writes the chunks under `generation`. Chunks already
 * written under that generation by an interrupted attempt are removed first, so a retry starts
 * clean. Nothing here makes the chunks visible: the caller switches the source's generation once
 * this returns.
 */
export async function ingestSource(source: SourceRow, generation: string, ctx: IngestContext): Promise<IngestResult> {
  await ctx.db.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).where('generation', '=', generation).execute();
  const failures: PageFailure[] = [];
  const progress: Progress = { pagesDone: 0, pagesTotal: null, chunksDone: 0 };
  let firstTitle: string | null = null;
  const onTotal = async (total: number | null) => {
    progress.pagesTotal = total;
    await ctx.progress({ ...progress });
  };
  for await (const page of pagesOf(source, ctx, failures, onTotal)) {
    ctx.fetch.signal.throwIfAborted();
    firstTitle ??= page.title;
    const drafts = chunkPage(page);
    await writeChunks(ctx, source, generation, drafts, progress.chunksDone);
    progress.pagesDone++;
    progress.chunksDone += drafts.length;
    await ctx.progress({ ...progress });
  }
  if (progress.pagesDone === 0 && failures.length > 0) {
    throw new Error(failures[0]!.reason);
  }
  return { chunks: progress.chunksDone, pages: progress.pagesDone, firstTitle, failures };
}
