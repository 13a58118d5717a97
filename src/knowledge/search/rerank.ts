import type { KnowledgeHit } from '../types.js';
import { idf, type Lexicon, type TermGroup } from './lexicon.js';
import { stem, termsOf } from './terms.js';

/** A hit with how much of the question it covers. */
export interface AssessedHit extends KnowledgeHit {
  /** IDF-weighted share of the question's groups the chunk holds (title, headings, text), 0..1. */
  coverage: number;
}

/** What a group weighs: the rarest of its words (a phrase is as specific as its most specific word). */
export function groupWeight(lexicon: Lexicon, group: TermGroup): number {
  return Math.max(...group.map((words) => Math.max(...words.map((w) => idf(lexicon, stem(w))))));
}

function holds(terms: Set<string>, group: TermGroup): boolean {
  return group.some((words) => words.every((w) => terms.has(stem(w))));
}

/** Positions of each stem in the text, for proximity. */
function positions(tokens: string[]): Map<string, number[]> {
  const map = new Map<string, number[]>();
  tokens.forEach((t, i) => {
    const list = map.get(t);
    if (list) list.push(i);
    else map.set(t, [i]);
  });
  return map;
}

/** Closest distance between any position of `a` and of `b`. */
function distance(a: number[], b: number[]): number {
  let best = Infinity;
  for (const x of a) for (const y of b) best = Math.min(best, Math.abs(x - y));
  return best;
}

/** Weights of the reranking: full-text rank, weighted coverage, coverage by headings, proximity. */
const W_TEXT = 0.4;
const W_COVER = 0.35;
const W_HEAD = 0.15;
const W_NEAR = 0.1;

/**
 * Reorders full-text candidates by what a reader would look for: the database's rank (BM25 or
 * ts_rank, scaled to the best one), the share of the question's distinctive terms the chunk holds
 * (weighted by rarity in the project), how much of it the page title and heading path name, and
 * whether consecutive words of the question sit close together in the text (phrase proximity).
 * Scores are replaced by the combined one; every hit carries its coverage.
 */
/** A chunk's words as the reranking reads them; chunks do not change, so they can be kept. */
export interface ChunkTerms {
  body: string[];
  head: Set<string>;
  all: Set<string>;
  at: Map<string, number[]>;
}

/** Analyses a chunk, or returns its analysis from `cache` (bounded: the oldest entries go first). */
function chunkTerms(hit: KnowledgeHit, cache?: Map<string, ChunkTerms>): ChunkTerms {
  const cached = cache?.get(hit.chunkId);
  if (cached) return cached;
  const body = termsOf(hit.text);
  const head = new Set(termsOf(`${hit.title} ${hit.headingPath.join(' ')}`));
  const terms = { body, head, all: new Set([...body, ...head]), at: positions(body) };
  if (cache) {
    if (cache.size >= CHUNK_CACHE) cache.delete(cache.keys().next().value!);
    cache.set(hit.chunkId, terms);
  }
  return terms;
}

/** Chunk analyses kept per app. */
const CHUNK_CACHE = 5_000;

export function rerank(hits: KnowledgeHit[], groups: TermGroup[], lexicon: Lexicon, cache?: Map<string, ChunkTerms>): AssessedHit[] {
  if (hits.length === 0) return [];
  const weights = groups.map((g) => groupWeight(lexicon, g));
  const total = weights.reduce((s, w) => s + w, 0) || 1;
  const top = Math.max(...hits.map((h) => h.score), 1e-9);
  const scored = hits.map((hit, rank) => {
    const { head, all, at } = chunkTerms(hit, cache);
    let cover = 0;
    let headCover = 0;
    groups.forEach((g, i) => {
      if (holds(all, g)) cover += weights[i]!;
      if (holds(head, g)) headCover += weights[i]!;
    });
    let pairs = 0;
    let near = 0;
    for (let i = 0; i + 1 < groups.length; i++) {
      const a = at.get(stem(groups[i]![0]!.at(-1)!));
      const b = at.get(stem(groups[i + 1]![0]![0]!));
      pairs++;
      if (a && b && distance(a, b) <= 3) near++;
    }
    const coverage = cover / total;
    // Ties keep the database's order.
    const score = W_TEXT * (Math.max(0, hit.score) / top) + W_COVER * coverage + W_HEAD * (headCover / total) + W_NEAR * (pairs ? near / pairs : 0) - rank * 1e-6;
    return { ...hit, coverage: Number(coverage.toFixed(3)), score: Number(score.toFixed(6)) };
  });
  return scored.sort((a, b) => b.score - a.score);
}

/**
 * How many of the first results come from different sources. The reranking scores passages one by
 * one, so a long page whose words match the question fills the first places with its passages and
 * pushes a page that answers below them; three distinct pages first let a reader (and the model)
 * see the best passage of each before the second of any. Measured in docs/knowledge.md
 * ("Three pages first").
 */
export const DISTINCT_SOURCES_FIRST = 3;

/**
 * Reorders ranked hits so that the first `distinct` come from different sources (the best of each,
 * in rank order), followed by every other hit in rank order. With fewer sources than that, the best
 * of each still comes first (A1 A2 B1 becomes A1 B1 A2); with one, the order is the ranking's.
 * Scores stay best first: a hit moved down is capped just below the one before it, as between the
 * full-text tiers.
 */
export function diversify<T extends KnowledgeHit>(hits: T[], distinct = DISTINCT_SOURCES_FIRST): T[] {
  const seen = new Set<string>();
  const first: T[] = [];
  for (const hit of hits) {
    if (first.length === distinct) break;
    if (seen.has(hit.sourceId)) continue;
    seen.add(hit.sourceId);
    first.push(hit);
  }
  const ordered = [...first, ...hits.filter((hit) => !first.includes(hit))];
  for (let i = 1; i < ordered.length; i++) {
    const before = ordered[i - 1]!.score;
    if (ordered[i]!.score >= before) ordered[i] = { ...ordered[i]!, score: Number((before - 1e-6).toFixed(6)) };
  }
  return ordered;
}
