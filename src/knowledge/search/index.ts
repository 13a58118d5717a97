import type { Store } from '../../store/index.js';
import type { Embedder } from '../embeddings.js';
import type { KnowledgeHit } from '../types.js';
import type { FullTextIndex } from './full-text.js';
import { postgresFullText } from './postgres.js';
import { sqliteFullText } from './sqlite.js';

/** Knowledge search as the API and the agent use it: full text, fused with vectors when configured. */
export interface KnowledgeSearch {
  search(projectId: string, query: string, limit?: number): Promise<KnowledgeHit[]>;
  /** The embedding model in use, or null for full text alone. */
  readonly embeddingModel: string | null;
}

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
  return {
    embeddingModel: embedder?.model ?? null,
    async search(projectId, query, limit = 5) {
      if (!embedder) return fullText.search(projectId, query, limit);
      // Each list looks deeper than the answer so fusion can promote a chunk ranked well by one only.
      const depth = Math.max(limit * 4, 20);
      const [text, vector] = await Promise.all([
        fullText.search(projectId, query, depth),
        embedder.nearest(store.db, projectId, query, depth),
      ]);
      return reciprocalRankFusion([text, vector], limit);
    },
  };
}
