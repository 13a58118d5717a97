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
 * The query's words are OR-ed (each quoted, so FTS5 syntax cannot be injected); BM25 rewards the
 * chunks that hold more of them, and rarer ones more.
 */
export function sqliteFullText(db: Kysely<Database>): FullTextIndex {
  return {
    async search(projectId, query, limit) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const match = terms.map((t) => `"${t}"`).join(' OR ');
      const { rows } = await sql<Row>`
        select c.id, c.source_id, c.title, c.heading_path, c.url, c.text,
               -bm25(knowledge_fts, ${WEIGHTS}) as score
        from knowledge_fts
        join knowledge_chunks c on c.rowid = knowledge_fts.rowid
        join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
        where knowledge_fts match ${match} and c.project_id = ${projectId}
        order by bm25(knowledge_fts, ${WEIGHTS})
        limit ${limit}`.execute(db);
      return rows.map(toRanked);
    },
  };
}
