import type { KnowledgeHit } from '../types.js';
import { withoutCourtesies } from './courtesy.js';
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
   * `matches`, when given, estimates how many of the project's chunks hold a group: a part of the
   * query estimated to match more than BROAD_MATCHES chunks is read through a bounded candidate
   * set instead of ranking every match (see tieredSearch).
   */
  search(
    projectId: string,
    query: string | TermGroup[],
    limit: number,
    candidates?: number,
    matches?: (group: TermGroup) => number,
    weight?: (group: TermGroup) => number,
  ): Promise<KnowledgeHit[]>;
}

/** The groups of a query given as text: its words (without its courtesies), each on its own. */
export function groupsOf(query: string | TermGroup[]): TermGroup[] {
  return typeof query === 'string' ? queryGroups(withoutCourtesies(query), EMPTY_LEXICON, isQueryStopword) : query;
}

/** Queries of up to this many words get the middle tier (pairs grow quadratically). */
const MAX_PAIR_TERMS = 8;

/**
 * A query part estimated to match more of the project's chunks than this is "broad": ranking all
 * its matches would cost time proportional to the corpus (a word held by a tenth of 500,000 chunks
 * is 50,000 rankings), so it is read through a bounded candidate set: its first BROAD_MATCHES
 * matches whose title or headings hold it, then its first BROAD_MATCHES matches anywhere, each set
 * ranked among itself. 500 rather than thousands: on SQLite the time of a broad word's search at
 * 500,000 chunks fell from ~5 ms (1,000) to ~2 ms, each candidate costing a BM25 evaluation.
 */
export const BROAD_MATCHES = 500;

/** Every pair of the terms, for the "at least two words" tier: `[[a, b], [a, c], [b, c]]`. */
export function termPairs(terms: string[]): Array<[string, string]> {
  return terms.flatMap((a, i) => terms.slice(i + 1).map((b): [string, string] => [a, b]));
}

/**
 * What a database contributes to a tiered search: how its query language combines parts, and three
 * ways of reading a query's matches, each returning visible chunks of the project, best first.
 * `whole` says that every match holds every group of the question (the first tier): a ranking by
 * which groups a chunk holds has nothing to tell apart there.
 */
export interface FullTextDialect {
  /** The query matching every one of the expressions. */
  all(exprs: string[]): string;
  /** The query matching any of the expressions. */
  any(exprs: string[]): string;
  /** Ranks every match and returns the best `depth` (the cost grows with the matches). */
  ranked(expr: string, depth: number, whole: boolean): Promise<KnowledgeHit[]>;
  /**
   * Ranks only the first `cap` matches in index order (roughly oldest first) and returns the best
   * `depth` of them; `cut` when more than `cap` chunks matched, so the ranking is not the whole one.
   */
  sampled(expr: string, depth: number, cap: number, whole: boolean): Promise<{ hits: KnowledgeHit[]; cut: boolean }>;
  /** Ranks the first `cap` matches whose title or headings themselves match, the best `depth` of them. */
  headed(expr: string, depth: number, cap: number, whole: boolean): Promise<KnowledgeHit[]>;
}

/** A tier's part: a dialect expression with its estimated matches (Infinity: unknown, never broad). */
interface Part {
  expr: string;
  matches: number;
}

/**
 * Appends a later list after the hits so far: chunks already found are dropped, and a later
 * list's scores are capped at the lowest so far, so earlier lists keep their place whatever the
 * raw scores say (and a reranking by score starts from that order).
 */
export function appendAfter(hits: KnowledgeHit[], more: KnowledgeHit[]): KnowledgeHit[] {
  const seen = new Set(hits.map((h) => h.chunkId));
  const floor = Math.min(...hits.map((h) => h.score), Infinity);
  return [...hits, ...more.filter((h) => !seen.has(h.chunkId)).map((h) => ({ ...h, score: Number.isFinite(floor) ? Math.min(h.score, floor) : h.score }))];
}

/**
 * Chunks holding every word of the query first; when they are fewer than `limit`, chunks holding
 * at least two of the words (queries of three to eight words), and only then the broad any-word
 * query, each tier filling the rest. Ranking all chunks that share one common word with the query
 * costs time proportional to the corpus; the narrower tiers keep the usual question cheap, and the
 * last keeps recall for the rest.
 *
 * Within a tier, with `matches` estimates: when no part is broad (see BROAD_MATCHES) every match
 * is ranked, as the database would. Otherwise the tier reads, in this order and only until it has
 * `candidates` chunks: every match of its narrow parts, ranked (a rarer word says more, as BM25's
 * IDF would have it); the broad parts' first BROAD_MATCHES matches whose title or headings hold
 * them, ranked among themselves; then the broad parts' first BROAD_MATCHES matches anywhere,
 * ranked among themselves. When that last read shows at most BROAD_MATCHES matches (the estimate
 * was high) and the tier has no narrow part, its ranking of every match is the tier's result.
 */
export async function tieredSearch(
  d: FullTextDialect,
  groups: string[],
  limit: number,
  candidates: number,
  matches?: number[],
): Promise<KnowledgeHit[]> {
  const depth = Math.max(limit * 4, 20, candidates);
  const want = Math.max(limit, candidates);
  const estimate = (i: number) => matches?.[i] ?? Infinity;
  // A conjunction matches at most as many chunks as its rarest part.
  const allPart: Part = { expr: d.all(groups), matches: Math.min(...groups.map((_, i) => estimate(i))) };
  const pairParts: Part[] = termPairs(groups.map((_, i) => String(i))).map(([a, b]) => ({
    expr: d.all([groups[Number(a)]!, groups[Number(b)]!]),
    matches: Math.min(estimate(Number(a)), estimate(Number(b))),
  }));
  const anyParts: Part[] = groups.map((expr, i) => ({ expr, matches: estimate(i) }));
  const broad = (p: Part) => Number.isFinite(p.matches) && p.matches > BROAD_MATCHES;

  const tier = async (parts: Part[]): Promise<KnowledgeHit[]> => {
    const whole = parts.length === 1 && parts[0] === allPart;
    const wide = parts.filter(broad);
    const narrow = parts.filter((p) => !broad(p));
    if (wide.length === 0) return d.ranked(d.any(parts.map((p) => p.expr)), depth, whole);
    let hits = narrow.length > 0 ? await d.ranked(d.any(narrow.map((p) => p.expr)), depth, whole) : [];
    if (hits.length >= want) return hits;
    const expr = d.any(wide.map((p) => p.expr));
    hits = appendAfter(hits, await d.headed(expr, depth, BROAD_MATCHES, whole));
    if (hits.length >= want) return hits;
    const sample = await d.sampled(expr, depth, BROAD_MATCHES, whole);
    // Fewer matches than estimated: the sample is every match, ranked as the database would.
    if (!sample.cut && narrow.length === 0) return sample.hits;
    return appendAfter(hits, sample.hits);
  };

  const tiers: Part[][] = [
    [allPart],
    ...(groups.length >= 3 && groups.length <= MAX_PAIR_TERMS ? [pairParts] : []),
    ...(groups.length > 1 ? [anyParts] : []),
  ];
  let hits: KnowledgeHit[] = [];
  for (const parts of tiers) {
    if (hits.length >= limit) break;
    hits = appendAfter(hits, await tier(parts));
  }
  return hits.slice(0, want);
}
