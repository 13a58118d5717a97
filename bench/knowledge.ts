import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { chunkPage } from '../src/knowledge/chunk.js';
import { markdownToPage } from '../src/knowledge/markdown.js';
import { insertChunks, type NewChunk, type SourceRow } from '../src/knowledge/ingest.js';
import { startKnowledgeWorker } from '../src/knowledge/jobs.js';
import { DocumentParser } from '../src/knowledge/parser.js';
import { createSource } from '../src/knowledge/sources.js';
import { secretBox } from '../src/lib/secret-box.js';
import { createProject } from '../src/projects/projects.js';
import { seededRandom } from './random.js';
import { openBench, waitAllReady } from './store.js';
import { newId, now } from '../src/lib/ids.js';
import { answerRank, loadCorpus, retrievalScores } from '../test/support/corpus.js';
import { helpManual } from '../test/support/knowledge.js';

/**
 * Knowledge benchmark: ingests a generated corpus (BENCH_KNOWLEDGE_PAGES pages, default 2,000, of 25
 * sections each: ≥ 50,000 chunks), reports ingestion throughput and search latency p50/p99 on SQLite
 * and, when BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a PostgreSQL server, on PostgreSQL; then
 * retrieval quality (hit@1, hit@3, MRR) on the public-domain corpus under test/fixtures/knowledge,
 * full text alone and, when ANSWERDESK_EMBEDDING_MODEL is set, fused with embeddings; and the
 * longest the event loop stalls while one large Markdown document (BENCH_KNOWLEDGE_DOC_MB, default
 * 19) is ingested, with the document read on the main thread (as before) and in the parser's worker.
 *
 * BENCH_KNOWLEDGE_LARGE=1 adds the same searches over ten times the corpus (20,000 pages, ≥ 500,000
 * chunks; BENCH_KNOWLEDGE_LARGE_PAGES changes it), so how search cost grows with size shows. That
 * corpus is written straight through the ingestion's chunker and chunk writer, without the job
 * queue (its throughput is the smaller run's figure), and takes minutes: it is not in the default
 * run.
 */

const PAGES = Number(process.env.BENCH_KNOWLEDGE_PAGES ?? 2000);
const LARGE = process.env.BENCH_KNOWLEDGE_LARGE === '1' || process.env.BENCH_KNOWLEDGE_LARGE === 'true';
const LARGE_PAGES = Number(process.env.BENCH_KNOWLEDGE_LARGE_PAGES ?? 20_000);
const SECTIONS = 25;
const QUERIES = 1000;
const DOC_MB = Number(process.env.BENCH_KNOWLEDGE_DOC_MB ?? 19);

/** Every run indexes the same text. */
const random = seededRandom(42);
const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'sa', 'do', 'fu', 'gri', 'bal', 'ten', 'mor'];
/**
 * 20,000 made-up words used with Zipf's law (frequency ∝ 1/rank) over ranks 100..20,000: the shape of
 * real help text once its 100 most common words, the stopwords a query drops, are left out.
 */
const vocabulary = Array.from({ length: 20_000 }, (_, i) => {
  let w = '';
  let n = i + 7;
  do {
    w += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  } while (n > 0);
  return w;
});
const zipfWord = () => vocabulary[Math.floor(100 * 200 ** random()) - 100]!;
const sentence = (words: number) => `${Array.from({ length: words }, zipfWord).join(' ')}.`;

function page(i: number): string {
  const parts = [`# Guide ${i}: ${zipfWord()} ${zipfWord()}`];
  for (let s = 0; s < SECTIONS; s++) {
    parts.push(`## Topic ${zipfWord()} ${i}-${s}`, `${sentence(14)} ${sentence(12)} ${sentence(16)} Section code q${i}x${s} ${sentence(10)}`);
  }
  return parts.join('\n\n');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The shapes of the searches timed, in turn. */
const SHAPES = ['commonWords', 'commonWord', 'rareWord', 'specific'] as const;
type Shape = (typeof SHAPES)[number];

/**
 * One query of each shape, in turn: a few Zipf-drawn words in a question ("common words"); one of
 * the five most frequent words (each in ~10 % of the chunks) alone ("common word"); one word of
 * rank 15,000–20,000 (tens of chunks in 50,000) alone ("rare word"); a section's code and a word
 * ("specific").
 */
function benchQueries(pages: number): Array<{ shape: Shape; q: string }> {
  const queryRandom = seededRandom(7);
  return Array.from({ length: QUERIES }, (_, n) => {
    const shape = SHAPES[n % SHAPES.length]!;
    const i = Math.floor(queryRandom() * pages);
    const s = Math.floor(queryRandom() * SECTIONS);
    const q =
      shape === 'commonWords' ? `how do I ${zipfWord()} the ${zipfWord()} ${zipfWord()}`
      : shape === 'commonWord' ? `how do I ${vocabulary[Math.floor(queryRandom() * 5)]}`
      : shape === 'rareWord' ? vocabulary[15_000 + Math.floor(queryRandom() * 5_000)]!
      : `q${i}x${s} ${zipfWord()}`;
    return { shape, q };
  });
}

/** Writes the corpus straight through the chunker and the chunk writer, one source per page, all visible. */
async function seed(deps: Awaited<ReturnType<typeof openBench>>['deps'], projectId: string, pages: number) {
  const db = deps.store.db;
  const SOURCES_PER_WRITE = 40;
  for (let first = 0; first < pages; first += SOURCES_PER_WRITE) {
    const at = now();
    const sources: SourceRow[] = [];
    const chunks: NewChunk[] = [];
    for (let i = first; i < Math.min(pages, first + SOURCES_PER_WRITE); i++) {
      const id = newId('ks');
      const generation = `gen_bench${i}`;
      const pageChunks = chunkPage(markdownToPage(page(i), ''));
      pageChunks.forEach((d, position) =>
        chunks.push({
          id: newId('chunk'), project_id: projectId, source_id: id, generation, position, title: d.title,
          heading_path: JSON.stringify(d.headingPath), headings: d.headingPath.join(' > '), url: d.url, text: d.text, embedding: null,
        }),
      );
      // As a finished ingestion leaves it: the visible generation and its chunk count.
      sources.push({
        id, project_id: projectId, type: 'markdown', title: null, url: null, payload: null, options: '{}', status: 'ready', error: null,
        pages_done: 1, pages_total: 1, chunks_done: pageChunks.length, chunk_count: pageChunks.length, generation, synced_at: at, created_at: at, updated_at: at,
      });
    }
    await db.insertInto('knowledge_sources').values(sources).execute();
    await insertChunks(db, chunks);
  }
}

async function scale(kind: 'sqlite' | 'postgres', url: string, pages: number, how: 'ingested' | 'seeded') {
  const bench = await openBench(kind, url);
  const { deps } = bench;
  try {
    const { project } = await createProject(deps.store.db, secretBox(deps.config), { name: 'bench' });
    const started = performance.now();
    if (how === 'ingested') {
      const workers = [startKnowledgeWorker(deps, { pollMs: 20 })];
      for (let i = 0; i < pages; i++) await createSource(deps, project.id, { type: 'markdown', payload: page(i) });
      await waitAllReady(deps.store, project.id);
      await Promise.all(workers.map((w) => w.stop()));
    } else {
      await seed(deps, project.id, pages);
    }
    const seconds = (performance.now() - started) / 1000;
    const chunks = await deps.store.db
      .selectFrom('knowledge_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    const failed = await deps.store.db.selectFrom('knowledge_sources').select('id').where('status', '=', 'failed').execute();

    const search = deps.knowledge.search;
    const queries = benchQueries(pages);
    for (const { q } of queries.slice(0, 50)) await search.search(project.id, q, 5); // warm-up
    const times: number[] = [];
    const byShape = new Map<Shape, number[]>(SHAPES.map((shape) => [shape, []]));
    for (const { shape, q } of queries) {
      const t0 = performance.now();
      await search.search(project.id, q, 5);
      const ms = performance.now() - t0;
      times.push(ms);
      byShape.get(shape)!.push(ms);
    }
    times.sort((a, b) => a - b);
    const ms = (n: number) => Number(n.toFixed(2));
    const shapes = Object.fromEntries(
      [...byShape].flatMap(([shape, list]) => {
        list.sort((a, b) => a - b);
        return [[`${shape}P50`, ms(percentile(list, 50))], [`${shape}P99`, ms(percentile(list, 99))]];
      }),
    );
    return {
      database: kind,
      pages,
      chunks: Number(chunks.n),
      failedSources: failed.length,
      ...(how === 'ingested'
        ? { ingestSeconds: Number(seconds.toFixed(1)), pagesPerSec: Math.round(pages / seconds), chunksPerSec: Math.round(Number(chunks.n) / seconds) }
        : { seedSeconds: Number(seconds.toFixed(1)) }),
      searchP50ms: ms(percentile(times, 50)),
      searchP99ms: ms(percentile(times, 99)),
      ...shapes,
    };
  } finally {
    await bench.close();
  }
}

async function quality(kind: 'sqlite' | 'postgres', url: string, withEmbeddings: boolean) {
  const bench = await openBench(kind, url);
  const env = withEmbeddings ? {} : { ANSWERDESK_EMBEDDING_MODEL: undefined };
  // The knowledge runtime is built from the config: a config without the embedding model, a runtime without the embedder.
  const deps = createDeps({ ...bench.deps.config, ...env }, bench.deps.store, bench.deps.limiter);
  try {
    const { project } = await createProject(deps.store.db, secretBox(deps.config), { name: 'quality' });
    const corpus = await loadCorpus();
    const worker = startKnowledgeWorker(deps, { pollMs: 20 });
    const sourceByDoc = new Map<string, string>();
    for (const doc of corpus.documents) {
      sourceByDoc.set(doc.file, (await createSource(deps, project.id, { type: doc.type, title: doc.file, payload: doc.content })).id);
    }
    await waitAllReady(deps.store, project.id);
    await worker.stop();
    const ranks: Array<number | null> = [];
    for (const question of corpus.questions) {
      const results = await deps.knowledge.search.search(project.id, question.q, 10);
      ranks.push(answerRank(question, results, (doc) => sourceByDoc.get(doc)!));
    }
    const scores = retrievalScores(ranks);
    return {
      database: kind,
      mode: withEmbeddings ? `full text + ${deps.config.ANSWERDESK_EMBEDDING_MODEL}` : 'full text',
      questions: corpus.questions.length,
      hitAt1: Number(scores.hitAt1.toFixed(3)),
      hitAt3: Number(scores.hitAt3.toFixed(3)),
      mrr: Number(scores.mrr.toFixed(3)),
    };
  } finally {
    await bench.close();
  }
}

/**
 * The longest the event loop was late: a 10 ms ticker notes the largest gap between its ticks, up
 * to the moment it is stopped (perf_hooks' histogram has no sample at all when the loop never got a
 * turn, which is the worst case).
 */
function stallMeter() {
  const every = 10;
  let last = performance.now();
  let worst = 0;
  const gaps: number[] = [];
  const note = () => {
    const now = performance.now();
    const late = Math.max(0, now - last - every);
    worst = Math.max(worst, late);
    gaps.push(late);
    last = now;
  };
  const timer = setInterval(note, every);
  return {
    stop() {
      clearInterval(timer);
      note();
      gaps.sort((a, b) => a - b);
      return { maxMs: Math.round(worst), p99Ms: Math.round(percentile(gaps, 99)) };
    },
  };
}

/**
 * Ingests one large Markdown document from upload to searchable while a histogram records how late
 * the event loop ran (what a health check or an answer waiting on this node would feel).
 */
async function eventLoopDuringIngest(kind: 'sqlite' | 'postgres', url: string, reading: 'main thread' | 'worker thread', text: string) {
  const bench = await openBench(kind, url);
  const { deps } = bench;
  // The runtime's parser, replaced for the "before" row by one that never leaves the main thread.
  const runtime = deps.knowledge;
  if (reading === 'main thread') runtime.parser = new DocumentParser({ offThreadMinSize: Infinity });
  try {
    const { project } = await createProject(deps.store.db, secretBox(deps.config), { name: 'big document' });
    const worker = startKnowledgeWorker(deps, { pollMs: 20 });
    const meter = stallMeter();
    const started = performance.now();
    await createSource(deps, project.id, { type: 'markdown', payload: text });
    await waitAllReady(deps.store, project.id);
    const seconds = (performance.now() - started) / 1000;
    const stall = meter.stop();
    await worker.stop();
    await runtime.parser.close();
    const chunks = await deps.store.db.selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', project.id).executeTakeFirstOrThrow();
    return {
      database: kind,
      reading,
      documentMB: Number((text.length / 1024 / 1024).toFixed(1)),
      chunks: Number(chunks.n),
      ingestSeconds: Number(seconds.toFixed(1)),
      maxEventLoopDelayMs: stall.maxMs,
      p99EventLoopDelayMs: stall.p99Ms,
    };
  } finally {
    await bench.close();
  }
}

export async function run(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const targets: Array<['sqlite' | 'postgres', string]> = [['sqlite', ''], ...(pgUrl ? [['postgres', pgUrl] as ['postgres', string]] : [])];
  if (!pgUrl) console.log('PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to include it.');

  const rows = [];
  for (const [kind, url] of targets) rows.push(await scale(kind, url, PAGES, 'ingested'));
  console.log(`Ingestion and search at scale (${PAGES} pages × ${SECTIONS} sections; ${QUERIES} searches of ${SHAPES.length} shapes in turn, top 5; goal p99 ≤ 20 ms):`);
  console.table(rows);
  if (LARGE) {
    const large = [];
    for (const [kind, url] of targets) large.push(await scale(kind, url, LARGE_PAGES, 'seeded'));
    console.log(`Search over a large corpus (${LARGE_PAGES} pages × ${SECTIONS} sections, written without the job queue; same searches; goal p99 ≤ 20 ms):`);
    console.table(large);
  } else {
    console.log('Search at 500,000 chunks: set BENCH_KNOWLEDGE_LARGE=1 to measure it (minutes).');
  }

  const embeddings = Boolean(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }).ANSWERDESK_EMBEDDING_MODEL);
  const quality_rows = [];
  for (const [kind, url] of targets) {
    quality_rows.push(await quality(kind, url, false));
    if (embeddings) quality_rows.push(await quality(kind, url, true));
  }
  console.log('Retrieval quality on test/fixtures/knowledge (public domain):');
  console.table(quality_rows);
  if (!embeddings) console.log('With embeddings: unavailable (set ANSWERDESK_EMBEDDING_MODEL and its provider settings to measure).');

  const text = helpManual(DOC_MB * 1024 * 1024);
  const stall_rows = [];
  for (const [kind, url] of targets) {
    for (const reading of ['main thread', 'worker thread'] as const) stall_rows.push(await eventLoopDuringIngest(kind, url, reading, text));
  }
  console.log(`Event loop during the ingestion of one ${DOC_MB} MB Markdown document (before: read on the main thread; after: in a worker thread):`);
  console.table(stall_rows);
}
