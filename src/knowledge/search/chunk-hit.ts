import type { KnowledgeHit } from '../types.js';

/** The columns of a chunk that a search selects, with its score. */
export interface ChunkRow {
  id: string;
  source_id: string;
  title: string;
  heading_path: string;
  url: string | null;
  text: string;
  score: number;
}

/** A selected chunk as the hit the API and the agent see. */
export function chunkHit(row: ChunkRow): KnowledgeHit {
  return {
    chunkId: row.id,
    sourceId: row.source_id,
    title: row.title,
    // Citations need a link a reader can open: a bare `#anchor` of an uploaded document is not one.
    url: row.url && /^https?:\/\//i.test(row.url) ? row.url : null,
    headingPath: JSON.parse(row.heading_path) as string[],
    text: row.text,
    score: Number(Number(row.score).toFixed(6)),
  };
}
