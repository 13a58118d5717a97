import type { KnowledgeHit } from '../types.js';
import { EMPTY_LEXICON, queryGroups, type TermGroup } from './lexicon.js';
import { isQueryStopword } from './query.js';

/**
 * Full-text search over the searchable chunks of one project: BM25 (FTS5) on SQLite, ts_rank
 * over a weighted tsvector on PostgreSQL. Only chunks of a source's visible generation are found.
 * The query is a question (its words) or its groups of alternatives (see lexicon.ts): a chunk
 * matches a group when it holds any of its phrases.
 */
export interface FullTextIndex {
  /**
   * The best `limit` chunks; with `candidates` above `limit`, up to that many from the same queries
   * (the rows each query reads anyway), for a reranking: no broader query runs for them.
   */
  search(projectId: string, query: string | TermGroup[], limit: number, candidates?: number): Promise<KnowledgeHit[]>;
}

/** The groups of a query given as text: its words, each on its own. */
export function groupsOf(query: string | TermGroup[]): TermGroup[] {
  return typeof query === 'string' ? queryGroups(query, EMPTY_LEXICON, isQueryStopword) : query;
}

/** Queries of up to this many words get the middle tier (pairs grow quadratically). */
const MAX_PAIR_TERMS = 8;

/** Every pair of the terms, for the "at least two words" tier: `[[a, b], [a, c], [b, c]]`. */
export function termPairs(terms: string[]): Array<[string, string]> {
  return terms.flatMap((a, i) => terms.slice(i + 1).map((b): [string, string] => [a, b]));
}

/**
 * Chunks holding every word of the query first; when they are fewer than `limit`, chunks holding
 * at least two of the words (queries of three to eight words), and only then the broad any-word
 * query, each tier filling the rest. Ranking all chunks that share one common word with the query
 * costs time proportional to the corpus; the narrower tiers keep the usual question cheap, and the
 * last keeps recall for the rest.
 */
export async function withFallback(
  limit: number,
  termCount: number,
  candidates: number,
  all: () => Promise<KnowledgeHit[]>,
  any: () => Promise<KnowledgeHit[]>,
  two?: () => Promise<KnowledgeHit[]>,
): Promise<KnowledgeHit[]> {
  const tiers = [all, ...(two && termCount >= 3 && termCount <= MAX_PAIR_TERMS ? [two] : []), ...(termCount > 1 ? [any] : [])];
  let hits: KnowledgeHit[] = [];
  for (const tier of tiers) {
    if (hits.length >= limit) break;
    const seen = new Set(hits.map((h) => h.chunkId));
    const more = (await tier()).filter((h) => !seen.has(h.chunkId));
    // Earlier tiers keep their place ahead of later ones, whatever the raw scores say.
    const floor = Math.min(...hits.map((h) => h.score), Infinity);
    hits = [...hits, ...more.map((h) => ({ ...h, score: Number.isFinite(floor) ? Math.min(h.score, floor) : h.score }))];
  }
  return hits.slice(0, Math.max(limit, candidates));
}
