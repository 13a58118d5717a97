import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany, type EmbeddingModel } from 'ai';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../store/schema.js';
import { chunkHit, type ChunkRow } from './search/chunk-hit.js';
import type { KnowledgeHit } from './types.js';

/** Turns text into vectors and finds the chunks nearest to a query. */
export interface Embedder {
  /** The configured spec, e.g. `openai:text-embedding-3-small`. */
  readonly model: string;
  embed(texts: string[], abortSignal?: AbortSignal): Promise<number[][]>;
  nearest(db: Kysely<Database>, projectId: string, query: string, limit: number): Promise<KnowledgeHit[]>;
}

/** The embedding model named by ANSWERDESK_EMBEDDING_MODEL (`openai:<m>` or `openai-compatible:<m>`), or null. */
export function embeddingModelFrom(config: Config): EmbeddingModel | null {
  const spec = config.ANSWERDESK_EMBEDDING_MODEL;
  if (!spec) return null;
  const [provider, ...rest] = spec.split(':');
  const id = rest.join(':');
  if (provider === 'openai') return createOpenAI({ apiKey: config.OPENAI_API_KEY }).embedding(id);
  if (provider === 'openai-compatible') {
    if (!config.OPENAI_COMPATIBLE_BASE_URL) throw new Error('ANSWERDESK_EMBEDDING_MODEL openai-compatible needs OPENAI_COMPATIBLE_BASE_URL');
    return createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: config.OPENAI_COMPATIBLE_BASE_URL,
      apiKey: config.OPENAI_COMPATIBLE_API_KEY,
    }).embeddingModel(id);
  }
  throw new Error(`Unsupported embedding model: ${spec}`);
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The embedder for the configured model, or null when none is set (search is then full text
 * alone). Vectors are stored as JSON on each chunk and compared by exact cosine similarity over the
 * project's visible chunks: no vector extension is needed on either database, at the cost of a scan
 * that grows with the project's chunk count.
 */
export function createEmbedder(config: Config): Embedder | null {
  const model = embeddingModelFrom(config);
  if (!model) return null;
  const embed = async (values: string[], abortSignal?: AbortSignal) =>
    values.length === 0 ? [] : (await embedMany({ model, values, abortSignal, maxRetries: 2 })).embeddings;
  return {
    model: config.ANSWERDESK_EMBEDDING_MODEL!,
    embed,
    async nearest(db, projectId, query, limit) {
      const [vector] = await embed([query]);
      if (!vector) return [];
      const { rows } = await sql<ChunkRow & { embedding: string }>`
        select c.id, c.source_id, c.title, c.heading_path, c.url, c.text, 0 as score, c.embedding
        from knowledge_chunks c
        join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
        where c.project_id = ${projectId} and c.embedding is not null`.execute(db);
      return rows
        .map((row) => ({ ...chunkHit(row), score: cosine(vector, JSON.parse(row.embedding) as number[]) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, limit);
    },
  };
}
