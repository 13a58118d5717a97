import { definitionTerms, type KnowledgeHit } from '../types.js';
import { idf, unknownWord, type Lexicon, type TermGroup } from './lexicon.js';
import { stem, termsOf } from './terms.js';
import { isEnglishWord } from './wordnet.js';

/** A hit with how much of the question it covers. */
export interface AssessedHit extends KnowledgeHit {
  /**
   * IDF-weighted share of the question's groups the chunk holds (title, headings, text), 0..1: of
   * the groups it asks about, when its message also gives context (see askedGroups). A group it
   * lacks weighs MISSING_COMMON of its weight when its words are everyday English that the project
   * uses elsewhere (see commonWords): what a paraphrase says in other words; a name, or a word the
   * project never uses, weighs all of it.
   */
  coverage: number;
}

/**
 * What a question's group that a passage lacks weighs, of its weight, when it says in everyday
 * words something the project's content also says (see commonWords). A question's topic is named:
 * a product, a tool, a place ("PgBouncer", "bcrypt", "Mars"), or a word the content never uses
 * ("gift wrapping"); a passage that lacks it is about something else. Its everyday words ("my
 * voucher keeps getting refused", "read a whole file") are what a paraphrase changes, and a
 * passage that answers has no reason to repeat them. Measured in docs/knowledge.md ("Names and
 * everyday words").
 */
export const MISSING_COMMON = 0.1;

/**
 * Whether a group is everyday words the project uses: each word of the question's own phrase is
 * English (WordNet knows it) and is not written as a name, typed as code or with digits (`names`,
 * see writtenAsNames and codeWords), and the content uses one of the group's phrases. A word
 * neither the content nor English knows, searched as another ("pasword" as "password", "ppl" as
 * "people"), is judged by that word; one searched as nothing else is a name.
 */
export function commonWords(group: TermGroup, lexicon: Lexicon, names: Set<string> = new Set()): boolean {
  const own = group[0]!;
  const everyday = (words: string[]) => words.every((w) => /^[a-z]+$/.test(w) && !names.has(w) && isEnglishWord(w));
  const used = (words: string[]) => words.every((w) => lexicon.df.has(stem(w)));
  // A word typed short or misspelt ("ppl", "pasword"), which neither the content nor English
  // knows, is the word it is searched as: everyday when that word is.
  if (own.length === 1 && !names.has(own[0]!) && unknownWord(own[0]!, lexicon) && group.length > 1) {
    return group.slice(1).some((words) => everyday(words) && used(words));
  }
  if (!everyday(own)) return false;
  return group.some(used);
}

/**
 * What a group weighs: the rarest of its words (a phrase is as specific as its most specific word).
 * A misspelling weighs as the word it was taken for ("pasword" as "password"): a word no one knows
 * would otherwise weigh the most, as a word the content never uses does.
 */
export function groupWeight(lexicon: Lexicon, group: TermGroup): number {
  if (group.length > 1) {
    const known = group.filter((words) => !(words.length === 1 && unknownWord(words[0]!, lexicon)));
    if (known.length > 0) group = known;
  }
  return Math.max(...group.map((words) => Math.max(...words.map((w) => idf(lexicon, stem(w))))));
}

/** Whether a chunk's stems hold one of a group's phrases (`stemmed`: the group, each word stemmed). */
function holds(terms: Set<string>, stemmed: TermGroup): boolean {
  return stemmed.some((stems) => stems.every((s) => terms.has(s)));
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

/** Weights of the reranking: BM25F in the project, weighted coverage, coverage by headings, proximity. */
const W_TEXT = 0.4;
const W_COVER = 0.35;
const W_HEAD = 0.15;
const W_NEAR = 0.1;

/**
 * BM25's parameters: how fast repeated occurrences stop counting (k1), and how much a longer
 * chunk's occurrences are discounted (b). The usual values, as FTS5's `bm25()` has them.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** What an occurrence weighs by where it is: the weights FTS5's rank had (migration 006). */
export const FIELD_WEIGHTS = { title: 1.5, headings: 3, text: 1 } as const;

/** A chunk's words as the reranking reads them; chunks do not change, so they can be kept. */
export interface ChunkTerms {
  body: string[];
  head: Set<string>;
  all: Set<string>;
  /** Positions of each stem in the text. */
  at: Map<string, number[]>;
  /** The title's and the heading path's stems, in order (a few words: read by a scan). */
  title: string[];
  headings: string[];
  /** The stems of the definition-list terms in the text (see entryTerms), in order. */
  entries: string[];
  /** Terms in the title, heading path and text together (BM25's document length). */
  length: number;
}

/** Analyses a chunk, or returns its analysis from `cache` (bounded: the oldest entries go first). */
export function chunkTerms(hit: KnowledgeHit, cache?: Map<string, ChunkTerms>): ChunkTerms {
  const cached = cache?.get(hit.chunkId);
  if (cached) return cached;
  const body = termsOf(hit.text);
  const title = termsOf(hit.title);
  const headings = termsOf(hit.headingPath.join(' '));
  const entries = entryTerms(hit.text);
  const terms: ChunkTerms = {
    body,
    head: new Set([...title, ...headings, ...entries]),
    all: new Set([...body, ...title, ...headings]),
    at: positions(body),
    title,
    headings,
    entries,
    length: body.length + title.length + headings.length,
  };
  if (cache) {
    if (cache.size >= CHUNK_CACHE) cache.delete(cache.keys().next().value!);
    cache.set(hit.chunkId, terms);
  }
  return terms;
}

/**
 * The words of a chunk's definition-list terms (see definitionTerms). In a reference page the term
 * is the entry's name ("shared_buffers (integer)", "json.dumps(obj, *, …)"), a heading in all but
 * markup.
 */
const entryTerms = (text: string) => definitionTerms(text).flatMap((term) => termsOf(term));

/** Chunk analyses kept per app. */
const CHUNK_CACHE = 5_000;

/** Occurrences of a phrase (its words' stems one after the other) in a short field. */
function occurrencesIn(tokens: string[], stems: string[]): number {
  let n = 0;
  for (let p = 0; p + stems.length <= tokens.length; p++) if (stems.every((s, k) => tokens[p + k] === s)) n++;
  return n;
}

/** Occurrences of a phrase (its words' stems one after the other) in the text's positions. */
function occurrences(at: Map<string, number[]>, stems: string[]): number {
  const first = at.get(stems[0]!);
  if (!first) return 0;
  if (stems.length === 1) return first.length;
  const rest = stems.slice(1).map((s) => at.get(s));
  if (rest.some((list) => !list)) return 0;
  return first.filter((p) => rest.every((list, k) => list!.includes(p + k + 1))).length;
}

/** The question's groups with each word stemmed, as `bm25f` reads them (stemmed once per search). */
export function stemGroups(groups: TermGroup[]): TermGroup[] {
  return groups.map((group) => group.map((words) => words.map(stem)));
}

/**
 * BM25F of a chunk for the question's groups (`stemmed`, see stemGroups), in the project: each
 * group's occurrences (any of its phrases) counted in the title, heading path and text with
 * FIELD_WEIGHTS, saturated by k1 and normalised by the chunk's length against the project's
 * average, times the group's IDF in the project (`weights`). The same on both databases, and
 * independent of other projects' content.
 */
export function bm25f(terms: ChunkTerms, stemmed: TermGroup[], weights: number[], avgLength: number): number {
  const norm = BM25_K1 * (1 - BM25_B + (BM25_B * terms.length) / Math.max(avgLength, 1));
  let score = 0;
  stemmed.forEach((group, i) => {
    let tf = 0;
    for (const stems of group) {
      tf += FIELD_WEIGHTS.title * occurrencesIn(terms.title, stems) + FIELD_WEIGHTS.headings * (occurrencesIn(terms.headings, stems) + occurrencesIn(terms.entries, stems)) + FIELD_WEIGHTS.text * occurrences(terms.at, stems);
    }
    if (tf > 0) score += (weights[i]! * tf * (BM25_K1 + 1)) / (tf + norm);
  });
  return score;
}

/**
 * Reorders full-text candidates by what a reader would look for: how well the chunk's text ranks
 * for the question (BM25F over the project's own term statistics, scaled to the best candidate;
 * with `text: 'given'`, the candidates' own scores instead, as a fusion with vectors gives them), the share
 * of the question's distinctive terms the chunk holds (weighted by rarity in the project), how much
 * of it the page title and heading path name, and whether consecutive words of the question sit
 * close together in the text (phrase proximity). Scores are replaced by the combined one; every
 * hit carries its coverage of the groups `asked` marks (all when it is empty), which is what the
 * agent decides from, while the ranking reads every group.
 */
export function rerank(
  hits: KnowledgeHit[],
  groups: TermGroup[],
  lexicon: Lexicon,
  cache?: Map<string, ChunkTerms>,
  text: 'bm25' | 'given' = 'bm25',
  asked: boolean[] = [],
  names: Set<string> = new Set(),
): AssessedHit[] {
  if (hits.length === 0) return [];
  const weights = groups.map((g) => groupWeight(lexicon, g));
  const total = weights.reduce((s, w) => s + w, 0) || 1;
  // The coverage the agent decides from counts the groups the question asks about (askedGroups).
  const askedWeights = weights.map((w, i) => (asked[i] === false ? 0 : w));
  // What each asked group weighs when a passage lacks it.
  const missingWeights = groups.map((g, i) => askedWeights[i]! * (commonWords(g, lexicon, names) ? MISSING_COMMON : 1));
  const analysed = hits.map((hit) => chunkTerms(hit, cache));
  // A lexicon learned before any content arrived has no average: the candidates' own stands in.
  const avgLength = lexicon.avgLength || analysed.reduce((s, t) => s + t.length, 0) / analysed.length;
  const stemmed = stemGroups(groups);
  const textScores = text === 'given' ? hits.map((h) => Math.max(0, h.score)) : analysed.map((t) => bm25f(t, stemmed, weights, avgLength));
  const top = Math.max(...textScores, 1e-9);
  const results = hits.map((hit, index) => {
    const { head, all, at } = analysed[index]!;
    let cover = 0;
    let askedCover = 0;
    let askedMissing = 0;
    let headCover = 0;
    stemmed.forEach((g, i) => {
      if (holds(all, g)) {
        cover += weights[i]!;
        askedCover += askedWeights[i]!;
      } else askedMissing += missingWeights[i]!;
      if (holds(head, g)) headCover += weights[i]!;
    });
    let pairs = 0;
    let near = 0;
    for (let i = 0; i + 1 < groups.length; i++) {
      const a = at.get(stemmed[i]![0]!.at(-1)!);
      const b = at.get(stemmed[i + 1]![0]![0]!);
      pairs++;
      if (a && b && distance(a, b) <= 3) near++;
    }
    const score = W_TEXT * (textScores[index]! / top) + W_COVER * (cover / total) + W_HEAD * (headCover / total) + W_NEAR * (pairs ? near / pairs : 0);
    const coverage = askedCover + askedMissing > 0 ? askedCover / (askedCover + askedMissing) : 0;
    return { ...hit, coverage: Number(coverage.toFixed(3)), score: Number(score.toFixed(6)) };
  });
  // A stable sort: ties keep the database's order. The scores themselves owe nothing to that order,
  // so they are the same whatever else the database holds.
  return results.sort((a, b) => b.score - a.score);
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
