import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { chunkHit, type ChunkRow } from './chunk-hit.js';
import { groupsOf, termPairs, withFallback, type FullTextIndex } from './full-text.js';

/**
 * Full text on PostgreSQL: a stored, weighted tsvector (title A, headings B, text C) with a GIN
 * index, ranked by ts_rank (term frequency weighted by where the term occurs: headings weigh most,
 * then the title shared by a page's chunks, then the text) normalised by document length. The
 * query's words are AND-ed, then OR-ed when too few chunks hold them all (see withFallback); they
 * are plain letters and digits, so no tsquery operator can be injected.
 *
 * The inner query ranks the project's matching chunks reading only the chunk table, and keeps the
 * top candidates; only those are joined to their source to check the visible generation, looking
 * deeper when too few survive (the result is the same as ranking every match). ts_rank rather
 * than ts_rank_cd: cover density walks every term position of every match and cost about twice
 * the time, for no better ranking on the test corpus.
 */
export function postgresFullText(db: Kysely<Database>): FullTextIndex {
  return {
    async search(projectId, query, limit, candidates = limit) {
      const groups = groupsOf(query);
      if (groups.length === 0) return [];
      // A phrase's words follow each other (<->); a group is any of its phrases. Words are letters
      // and digits only, so no tsquery operator can be injected.
      const terms = groups.map((alts) => {
        const phrases = alts.map((words) => (words.length === 1 ? words[0]! : `(${words.join(' <-> ')})`));
        return phrases.length === 1 ? phrases[0]! : `(${phrases.join(' | ')})`;
      });
      const run = async (tsquery: string) => {
        for (let depth = Math.max(limit * 4, 20, candidates); ; depth *= 8) {
          const { rows } = await sql<ChunkRow & { visible: boolean }>`
            select c.id, c.source_id, c.title, c.heading_path, c.url, c.text, f.score, s.id is not null as visible
            from (
              select c.rowid, ts_rank('{0.1, 0.4, 1.0, 0.6}', c.tsv, q, 1) as score
              from knowledge_chunks c, to_tsquery('english', ${tsquery}) q
              where c.project_id = ${projectId} and c.tsv @@ q
              order by score desc, c.rowid
              limit ${depth}) f
            join knowledge_chunks c on c.rowid = f.rowid
            left join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            order by f.score desc, f.rowid`.execute(db);
          const found = rows.filter((r) => r.visible);
          if (found.length >= limit || rows.length < depth) return found.slice(0, Math.max(limit, candidates)).map(chunkHit);
        }
      };
      return withFallback(
        limit,
        terms.length,
        candidates,
        () => run(terms.join(' & ')),
        () => run(terms.join(' | ')),
        () => run(termPairs(terms).map(([a, b]) => `(${a} & ${b})`).join(' | ')),
      );
    },
  };
}
