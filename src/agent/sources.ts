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
