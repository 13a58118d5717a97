import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { FullTextIndex, RankedChunk } from './index.js';
import { queryTerms } from './query.js';

/** Column weights of bm25(): a heading match says more than a body match; the page title is shared by every chunk of a page. */
const WEIGHTS = sql.raw('1.5, 3.0, 1.0');

interface Row {
  id: string;
  source_id: string;
  title: string;
  heading_path: string;
  url: string | null;
  text: string;
  score: number;
}

export function toRanked(row: Row): RankedChunk {
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

/**
 * BM25 over the FTS5 external-content table that triggers keep in step with `knowledge_chunks`.
 * The query's words are each quoted, so FTS5 syntax cannot be injected; BM25 rewards the chunks
 * that hold more of them, and rarer ones more.
 */
export function sqliteFullText(db: Kysely<Database>): FullTextIndex {
  return {
    async search(projectId, query, limit) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const run = async (match: string, n: number) =>
        (
          await sql<Row>`
            select c.id, c.source_id, c.title, c.heading_path, c.url, c.text,
                   -bm25(knowledge_fts, ${WEIGHTS}) as score
            from knowledge_fts
            join knowledge_chunks c on c.rowid = knowledge_fts.rowid
            join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            where knowledge_fts match ${match} and c.project_id = ${projectId}
            order by bm25(knowledge_fts, ${WEIGHTS})
            limit ${n}`.execute(db)
        ).rows.map(toRanked);
      const quoted = terms.map((t) => `"${t}"`);
      return withFallback(limit, terms.length, () => run(quoted.join(' AND '), limit), () => run(quoted.join(' OR '), limit));
    },
  };
}

/**
 * Chunks holding every word of the query first; only when they are fewer than `limit` does the
 * broader any-word query run and fill the rest. Ranking all chunks that share one common word with
 * the query costs time proportional to the corpus; requiring all words keeps the usual question
 * cheap, and the fallback keeps recall for the rest.
 */
export async function withFallback(
  limit: number,
  termCount: number,
  all: () => Promise<RankedChunk[]>,
  any: () => Promise<RankedChunk[]>,
): Promise<RankedChunk[]> {
  const strict = await all();
  if (strict.length >= limit || termCount === 1) return strict;
  const seen = new Set(strict.map((h) => h.chunkId));
  const broad = (await any()).filter((h) => !seen.has(h.chunkId));
  // Strict matches keep their place ahead of partial ones, whatever the raw scores say.
  const floor = Math.min(...strict.map((h) => h.score), Infinity);
  return [...strict, ...broad.map((h) => ({ ...h, score: Number.isFinite(floor) ? Math.min(h.score, floor) : h.score }))].slice(0, limit);
}
