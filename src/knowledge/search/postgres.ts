import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../store/schema.js';
import { chunkHit, type ChunkRow } from './chunk-hit.js';
import type { KnowledgeHit } from '../types.js';
import { groupsOf, tieredSearch, type FullTextDialect, type FullTextIndex } from './full-text.js';

/**
 * How many of a question's groups, the rarest, PostgreSQL's candidate score counts (one
 * containment test per candidate each): a long message's further groups are its commonest words,
 * which say little about where its answer is.
 */
export const WEIGHTED_GROUPS = 8;

/**
 * Full text on PostgreSQL: a stored, weighted tsvector (title A, headings B, text C) with a GIN
 * index, ranked by the weight of the query's groups a chunk holds when the search gives their
 * weights, then by ts_rank (term frequency weighted by where the term occurs: headings weigh most,
 * then the title shared by a page's chunks, then the text) normalised by document length. The
 * query's words are AND-ed, then OR-ed when too few chunks hold them all (see tieredSearch); they
 * are plain letters and digits, so no tsquery operator can be injected.
 *
 * The inner query ranks the project's matching chunks reading only the chunk table, and keeps the
 * top candidates; only those are joined to their source to check the visible generation, looking
 * deeper when too few survive (the result is the same as ranking every match). ts_rank rather
 * than ts_rank_cd: cover density walks every term position of every match and cost about twice
 * the time, for no better ranking on the test corpus. A query part that matches a large share of
 * the project's chunks is read through bounded candidate sets instead (its first matches in the
 * bitmap scan's order, title and headings first; see tieredSearch).
 */
export function postgresFullText(db: Kysely<Database>): FullTextIndex {
  return {
    async search(projectId, query, limit, candidates = limit, matches, weight) {
      const groups = groupsOf(query);
      if (groups.length === 0) return [];
      // A phrase's words follow each other (<->); a group is any of its phrases. Words are letters
      // and digits only, so no tsquery operator can be injected.
      const terms = groups.map((alts) => {
        const phrases = alts.map((words) => (words.length === 1 ? words[0]! : `(${words.join(' <-> ')})`));
        return phrases.length === 1 ? phrases[0]! : `(${phrases.join(' | ')})`;
      });
      /**
       * Joins the ranked candidates (`picked`: rowid and score, best first, at most `depth`) to
       * their source, keeping the visible ones; looks deeper when too few pass.
       */
      const read = async (picked: (depth: number) => RawBuilder<unknown>, first: number): Promise<{ hits: KnowledgeHit[]; total: number }> => {
        for (let depth = first; ; depth *= 8) {
          const { rows } = await sql<ChunkRow & { visible: boolean; total: string }>`
            select c.id, c.source_id, c.title, c.heading_path, c.url, c.text, f.score, s.id is not null as visible, f.total
            from (${picked(depth)}) f
            join knowledge_chunks c on c.rowid = f.rowid
            left join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            order by f.score desc, f.rowid`.execute(db);
          const found = rows.filter((r) => r.visible);
          if (found.length >= limit || rows.length < depth) return { hits: found.map(chunkHit), total: Number(rows[0]?.total ?? 0) };
        }
      };
      // ts_rank knows no rarity: a chunk saying the question's common words often outranks one that
      // holds its rare ones. With the groups' weights (their IDF in the project), a chunk scores the
      // weight of the WEIGHTED_GROUPS rarest groups it holds plus its ts_rank (at most 1), as BM25's
      // IDF has it on SQLite. It decides which chunks of the later tiers are candidates; in the
      // first, where every chunk holds every group, ts_rank alone ranks. Each group's query is a
      // function scan beside `q`, so it is parsed once per query whatever plan runs it.
      const rarest = weight && groups.length > 1 ? groups.map((group, i) => ({ i, w: weight(group) })).sort((a, b) => b.w - a.w).slice(0, WEIGHTED_GROUPS) : [];
      const parsed = rarest.length > 0 ? sql`, ${sql.join(rarest.map(({ i }) => sql`to_tsquery('english', ${terms[i]!}) ${sql.raw(`g${i}`)}`))}` : sql``;
      const tsRank = sql`ts_rank('{0.1, 0.4, 1.0, 0.6}', c.tsv, q, 1)`;
      const held = rarest.length > 0 ? sql.join(rarest.map(({ i, w }) => sql`${w}::float8 * (c.tsv @@ ${sql.raw(`g${i}`)})::int`), sql` + `) : null;
      const rank = (whole: boolean) => (held && !whole ? sql`(${held} + ${tsRank})` : tsRank);
      const from = (tsquery: string, whole: boolean) => sql`knowledge_chunks c, to_tsquery('english', ${tsquery}) q${whole ? sql`` : parsed}`;
      // A sub-select with a LIMIT and no ORDER BY reads (and ranks) only that many matches, in the
      // order the index hands them over; the outer query sorts them.
      const firstMatches = (match: RawBuilder<unknown>, tsquery: string, cap: number, whole: boolean) => (depth: number) =>
        sql`select rowid, score, count(*) over () as total from (
              select c.rowid, ${rank(whole)} as score
              from ${from(tsquery, whole)}
              where c.project_id = ${projectId} and ${match}
              limit ${cap}) m
            order by score desc, rowid
            limit ${depth}`;
      const dialect: FullTextDialect = {
        all: (exprs) => (exprs.length === 1 ? exprs[0]! : `(${exprs.join(' & ')})`),
        any: (exprs) => exprs.join(' | '),
        ranked: async (tsquery, depth, whole) =>
          (
            await read(
              (d) => sql`
                select c.rowid, ${rank(whole)} as score, 0 as total
                from ${from(tsquery, whole)}
                where c.project_id = ${projectId} and c.tsv @@ q
                order by score desc, c.rowid
                limit ${d}`,
              depth,
            )
          ).hits,
        sampled: async (tsquery, depth, cap, whole) => {
          const { hits, total } = await read(firstMatches(sql`c.tsv @@ q`, tsquery, cap + 1, whole), Math.min(depth, cap));
          return { hits, cut: total > cap };
        },
        // The title and headings alone, as migration 014 indexes them (the same expression, so the
        // planner uses that index); ranked by the whole weighted tsvector.
        headed: async (tsquery, depth, cap, whole) =>
          (await read(firstMatches(sql`to_tsvector('english', c.title || ' ' || c.headings) @@ q`, tsquery, cap, whole), Math.min(depth, cap))).hits,
      };
      return tieredSearch(dialect, terms, limit, candidates, matches && groups.map(matches));
    },
  };
}
