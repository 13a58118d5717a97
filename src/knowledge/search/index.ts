import type { Store } from '../../store/index.js';
import type { Embedder } from '../embeddings.js';
import type { KnowledgeHit } from '../types.js';
import { withoutCourtesies } from './courtesy.js';
import type { FullTextIndex } from './full-text.js';
import { askedGroups, buildLexicon, groupMatches, queryGroups, respellText, type Lexicon, type TermGroup } from './lexicon.js';
import { postgresFullText } from './postgres.js';
import { isQueryStopword } from './query.js';
import { codeWords, writtenAsNames } from './terms.js';
import { diversify, groupWeight, rerank, type AssessedHit, type ChunkTerms } from './rerank.js';
import { sqliteFullText } from './sqlite.js';

/** The passages found for a question, with how well each covers it and what the question's terms weigh. */
export interface Assessment {
  hits: AssessedHit[];
  /** The question's groups of alternatives, each with its weight (IDF in the project). */
  terms: Array<{ forms: string[]; weight: number }>;
}

/** Knowledge search as the API and the agent use it: full text, fused with vectors when configured. */
export interface KnowledgeSearch {
  search(projectId: string, query: string, limit?: number): Promise<KnowledgeHit[]>;
  /** The same search, each hit with its coverage of the question (what the agent decides from). */
  assess(projectId: string, query: string, limit?: number): Promise<Assessment>;
  /**
   * Reads a message of the project with its misspellings as the content's words ("pasword" as
   * "password"), as the search reads them; for grouping messages that ask the same thing.
   */
  respeller(projectId: string): Promise<(text: string) => string>;
  /** Drops what was learned from a project's content (its chunks changed). */
  forget(projectId: string): void;
  /** The embedding model in use, or null for full text alone. */
  readonly embeddingModel: string | null;
}

/** How long a project's lexicon is used before the search checks whether its chunks changed. */
const LEXICON_CHECK_MS = 5_000;
/** The least time between two learnings of one project's lexicon (an ingestion changes it often). */
const LEXICON_REBUILD_MS = 30_000;
/**
 * Candidates the reranking sees per result asked for (at least 20): what the full-text queries
 * read anyway, so reranking adds no query. The tiers still stop as soon as `limit` chunks match.
 */
const RERANK_DEPTH = 4;

/** The full-text index of the store's database: the one place where the dialect picks the code. */
export function fullTextIndexFor(store: Store): FullTextIndex {
  return store.dialect === 'sqlite' ? sqliteFullText(store.db) : postgresFullText(store.db);
}

/** Reciprocal rank fusion constant (Cormack et al. 2009): damps the weight of the very top ranks. */
const RRF_K = 60;

/**
 * Merges ranked lists by reciprocal rank fusion: score = Σ 1 / (k + rank). Rank-based, so BM25 and
 * cosine scores, which live on different scales, need no calibration.
 */
export function reciprocalRankFusion(lists: KnowledgeHit[][], limit: number): KnowledgeHit[] {
  const fused = new Map<string, { hit: KnowledgeHit; score: number }>();
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.chunkId) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.chunkId, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score: Number(score.toFixed(6)) }));
}

/** Builds the search the app uses, from the store and the optional embedder (chosen at boot). */
export function createKnowledgeSearch(store: Store, embedder: Embedder | null): KnowledgeSearch {
  const fullText = fullTextIndexFor(store);
  // Per project: the lexicon learned from its chunks, the state of its sources it was built from,
  // and when that was last checked. Lives as long as the app (on AppDeps), never global.
  // When the chunks changed, the old lexicon keeps serving while the new one is learned.
  type Entry = { lexicon: Lexicon; signature: string; checkedAt: number; builtAt: number; next?: Promise<void> };
  const lexicons = new Map<string, Entry>();
  const firstBuilds = new Map<string, Promise<Entry>>();
  const analysed = new Map<string, ChunkTerms>();
  // Read from the project's sources, not its chunks: a source's row changes with every ingestion
  // step and its generation switch, and holds the visible chunk count. Counting the chunks
  // themselves cost 100–250 ms at 500,000 chunks, on SQLite with the event loop held.
  const signatureOf = async (projectId: string) => {
    const row = await store.db
      .selectFrom('knowledge_sources')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum<number | string | null>('chunk_count').as('chunks'), eb.fn.max('updated_at').as('at')])
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    const chunks = Number(row?.chunks ?? 0);
    return { signature: `${row?.n ?? 0}:${chunks}:${row?.at ?? ''}`, count: chunks };
  };
  const learn = async (projectId: string): Promise<Entry> => {
    const { signature, count } = await signatureOf(projectId);
    const lexicon = await buildLexicon(store.db, projectId, count);
    const entry = { lexicon, signature, checkedAt: Date.now(), builtAt: Date.now() };
    lexicons.set(projectId, entry);
    return entry;
  };
  const lexiconOf = async (projectId: string): Promise<Lexicon> => {
    const cached = lexicons.get(projectId);
    if (!cached) {
      const pending = firstBuilds.get(projectId) ?? learn(projectId).finally(() => firstBuilds.delete(projectId));
      firstBuilds.set(projectId, pending);
      return (await pending).lexicon;
    }
    if (Date.now() - cached.checkedAt < LEXICON_CHECK_MS || cached.next) return cached.lexicon;
    cached.checkedAt = Date.now();
    const { signature } = await signatureOf(projectId);
    if (signature !== cached.signature && Date.now() - cached.builtAt >= LEXICON_REBUILD_MS) {
      cached.next = learn(projectId).then(
        () => undefined,
        () => void (cached.next = undefined),
      );
    }
    return cached.lexicon;
  };

  const assessed = async (projectId: string, query: string, limit: number): Promise<{ hits: AssessedHit[]; groups: TermGroup[]; lexicon: Lexicon }> => {
    const lexicon = await lexiconOf(projectId);
    // A message's courtesies are no part of what it asks (once per search, for both uses).
    const question = withoutCourtesies(query);
    const groups = queryGroups(question, lexicon, isQueryStopword);
    if (groups.length === 0) return { hits: [], groups, lexicon };
    const asked = askedGroups(question, groups);
    const depth = Math.max(limit * RERANK_DEPTH, 20);
    const matches = (group: TermGroup) => groupMatches(lexicon, group);
    const weight = (group: TermGroup) => groupWeight(lexicon, group);
    let candidates: KnowledgeHit[];
    if (!embedder) candidates = await fullText.search(projectId, groups, limit, depth, matches, weight);
    else {
      // Each list looks deeper than the answer so fusion can promote a chunk ranked well by one only.
      const [text, vector] = await Promise.all([fullText.search(projectId, groups, depth, depth, matches, weight), embedder.nearest(store.db, projectId, question, depth)]);
      candidates = reciprocalRankFusion([text, vector], depth);
    }
    // Fused candidates keep their fused score as the text signal: it carries the vectors' ranking.
    const text = embedder ? 'given' : 'bm25';
    // Words written as names or typed as code name what the question is about, not everyday words.
    const names = new Set([...writtenAsNames(question), ...codeWords(question)]);
    return { hits: diversify(rerank(candidates, groups, lexicon, analysed, text, asked, names)).slice(0, limit), groups, lexicon };
  };

  return {
    embeddingModel: embedder?.model ?? null,
    async search(projectId, query, limit = 5) {
      const { hits } = await assessed(projectId, query, limit);
      return hits.map(({ coverage: _, ...hit }) => hit);
    },
    async assess(projectId, query, limit = 5) {
      // Every group, context too: it helps choose the sentence that answers; whether a passage
      // answers at all is its coverage, of what the question asks (askedGroups).
      const { hits, groups, lexicon } = await assessed(projectId, query, limit);
      return { hits, terms: groups.map((g) => ({ forms: g.map((words) => words.join(' ')), weight: Number(groupWeight(lexicon, g).toFixed(3)) })) };
    },
    async respeller(projectId) {
      const lexicon = await lexiconOf(projectId);
      // One respeller reads one report's messages: the words they repeat are read once.
      const known = new Map<string, string | null>();
      return (text) => respellText(text, lexicon, known);
    },
    forget(projectId) {
      const cached = lexicons.get(projectId);
      // Learned again at the next search, the current one serving meanwhile.
      if (cached) {
        cached.checkedAt = 0;
        cached.builtAt = 0;
      }
    },
  };
}
