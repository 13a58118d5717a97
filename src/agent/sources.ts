import type { KnowledgeHit } from '../knowledge/types.js';

/** A cited source as stored on the assistant message and sent as a source part. */
export interface CitedSource {
  sourceId: string;
  type: 'url' | 'document';
  title: string;
  url?: string;
}

/** The hits of a `search_knowledge` output, or [] when the output has another shape. */
export function readHits(output: unknown): KnowledgeHit[] {
  const results = (output as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return [];
  return results.filter(
    (h): h is KnowledgeHit =>
      typeof h === 'object' && h !== null && typeof h.sourceId === 'string' && typeof h.text === 'string',
  ).map((h) => ({
    chunkId: String(h.chunkId ?? ''),
    sourceId: h.sourceId,
    title: typeof h.title === 'string' ? h.title : '',
    url: typeof h.url === 'string' && h.url ? h.url : null,
    headingPath: Array.isArray(h.headingPath) ? h.headingPath.filter((x): x is string => typeof x === 'string') : [],
    text: h.text,
    score: typeof h.score === 'number' ? h.score : 0,
  }));
}

/**
 * One source per knowledge source, in the order the hits first name them. Citation numbers [n] in an
 * answer refer to this order, so the builtin model and the stored `sources` agree.
 */
export function distinctSources(hits: readonly KnowledgeHit[]): CitedSource[] {
  const seen = new Map<string, CitedSource>();
  for (const h of hits) {
    if (seen.has(h.sourceId)) continue;
    const title = h.title || h.headingPath.at(-1) || 'Help article';
    seen.set(h.sourceId, h.url ? { sourceId: h.sourceId, type: 'url', url: h.url, title } : { sourceId: h.sourceId, type: 'document', title });
  }
  return [...seen.values()];
}

/** A hit with the number `n` the knowledge tool gave it to be cited by. */
export type NumberedHit = KnowledgeHit & { n: number };

/** The hits of a `search_knowledge` output that carry their citation number. */
export function numberedHits(output: unknown): NumberedHit[] {
  const results = (output as { results?: unknown } | null)?.results;
  const raw = Array.isArray(results) ? (results as Array<{ n?: unknown }>) : [];
  const hits = readHits(output);
  return hits.flatMap((h, i) => (typeof raw[i]?.n === 'number' ? [{ ...h, n: raw[i].n as number }] : []));
}

/** Words of a text, lower-cased, for finding quoted runs. */
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Consecutive words an answer must share with a passage to have quoted it. */
const QUOTE_WORDS = 8;

/**
 * The sources an answer used, in the order it first used them: the passages it cites as [n] (also
 * [1, 2] and [1][2]), then those it quoted (eight or more consecutive words of the passage) without
 * citing. Hits it did not use are not sources.
 */
export function usedSources(answer: string, hits: readonly NumberedHit[]): CitedSource[] {
  const byN = new Map(hits.map((h) => [h.n, h]));
  const used: KnowledgeHit[] = [];
  for (const m of answer.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    for (const n of m[1]!.split(',')) {
      const hit = byN.get(Number(n.trim()));
      if (hit) used.push(hit);
    }
  }
  const said = ` ${wordsOf(answer).join(' ')} `;
  for (const hit of hits) {
    if (used.includes(hit)) continue;
    const words = wordsOf(hit.text);
    for (let i = 0; i + QUOTE_WORDS <= words.length; i++) {
      if (said.includes(` ${words.slice(i, i + QUOTE_WORDS).join(' ')} `)) {
        used.push(hit);
        break;
      }
    }
  }
  return distinctSources(used);
}
