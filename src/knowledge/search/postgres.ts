import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { FullTextIndex } from './index.js';
import { queryTerms } from './query.js';
import { toRanked, withFallback } from './sqlite.js';

/**
 * Full text on PostgreSQL: a stored, weighted tsvector (title A, headings B, text C) with a GIN
 * index, ranked by ts_rank_cd (cover density; headings weigh most, then the title shared by a page's chunks, then the text) normalised by document length. The query's words are
 * AND-ed, then OR-ed when too few chunks hold them all (see withFallback); they are plain letters and digits, so no tsquery operator can be injected.
 */
export function postgresFullText(db: Kysely<Database>): FullTextIndex {
  return {
    async search(projectId, query, limit) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const run = async (tsquery: string) =>
        (
          await sql<Parameters<typeof toRanked>[0]>`
            select c.id, c.source_id, c.title, c.heading_path, c.url, c.text,
                   ts_rank_cd('{0.1, 0.4, 1.0, 0.6}', c.tsv, q, 1) as score
            from knowledge_chunks c
            join knowledge_sources s on s.id = c.source_id and s.generation = c.generation,
                 to_tsquery('english', ${tsquery}) q
            where c.project_id = ${projectId} and c.tsv @@ q
            order by score desc, c.rowid
            limit ${limit}`.execute(db)
        ).rows.map(toRanked);
      return withFallback(limit, terms.length, () => run(terms.join(' & ')), () => run(terms.join(' | ')));
    },
  };
}
