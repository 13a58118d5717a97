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
  tokens.forEach((t, i) => map.set(t, [...(map.get(t) ?? []), i]));
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
export function rerank(hits: KnowledgeHit[], groups: TermGroup[], lexicon: Lexicon): AssessedHit[] {
  if (hits.length === 0) return [];
  const weights = groups.map((g) => groupWeight(lexicon, g));
  const total = weights.reduce((s, w) => s + w, 0) || 1;
  const top = Math.max(...hits.map((h) => h.score), 1e-9);
  const scored = hits.map((hit, rank) => {
    const bodyTokens = termsOf(hit.text);
    const head = new Set(termsOf(`${hit.title} ${hit.headingPath.join(' ')}`));
    const all = new Set([...bodyTokens, ...head]);
    let cover = 0;
    let headCover = 0;
    groups.forEach((g, i) => {
      if (holds(all, g)) cover += weights[i]!;
      if (holds(head, g)) headCover += weights[i]!;
    });
    const at = positions(bodyTokens);
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
