import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../store/schema.js';
import { chunkHit, type ChunkRow } from './chunk-hit.js';
import type { KnowledgeHit } from '../types.js';
import { groupsOf, tieredSearch, type FullTextDialect, type FullTextIndex } from './full-text.js';

/** A project's share of all chunks at or above which its searches skip the project filter in FTS5. */
const DOMINANT_SHARE = 0.5;
/** How long a project's share is trusted before it is counted again. */
const SHARE_TTL_MS = 60_000;

/**
 * BM25 over the FTS5 external-content table that triggers keep in step with `knowledge_chunks`
 * (column weights are the table's `rank` option, see migration 006). The query's words are each
 * quoted, so FTS5 syntax cannot be injected; BM25 rewards the chunks that hold more of them, and
 * rarer ones more.
 *
 * FTS5 ranks and picks the top candidates itself (`ORDER BY rank LIMIT`); only those are joined
 * to their chunk and source rows, then kept when they belong to the project and to a visible
 * generation. Candidates come from the project's own postings (the indexed `project` column), so
 * the cost follows the project's size, not the whole table's. A project that holds most of the
 * table skips that filter: intersecting with a posting list as long as the table, and BM25's count
 * of it, would cost more than the few foreign candidates it drops. When too few candidates survive
 * the checks, the search looks deeper, so the result is the same as ranking every match. A query
 * part that matches a large share of the project's chunks is read through bounded candidate sets
 * instead (its first matches in rowid order, title and headings first; see tieredSearch).
 */
export function sqliteFullText(db: Kysely<Database>): FullTextIndex {
  const shares = new Map<string, { dominant: boolean; until: number }>();
  const isDominant = async (projectId: string) => {
    const cached = shares.get(projectId);
    if (cached && cached.until > Date.now()) return cached.dominant;
    // From the sources' visible chunk counts: counting the chunks themselves held the event loop
    // for a few hundred ms at 500,000 chunks.
    const { rows } = await sql<{ mine: number; total: number }>`
      select (select coalesce(sum(chunk_count), 0) from knowledge_sources where project_id = ${projectId}) as mine,
             (select coalesce(sum(chunk_count), 0) from knowledge_sources) as total`.execute(db);
    const { mine, total } = rows[0]!;
    const dominant = total > 0 && mine / total >= DOMINANT_SHARE;
    shares.set(projectId, { dominant, until: Date.now() + SHARE_TTL_MS });
    return dominant;
  };

  return {
    async search(projectId, query, limit, candidates = limit, matches) {
      const groups = groupsOf(query);
      if (groups.length === 0) return [];
      const scoped = !(await isDominant(projectId));
      // The random part of the id, as migration 006 indexes it; FTS5 strings escape `"` by doubling.
      const project = `{project}: "${projectId.slice(projectId.indexOf('_') + 1).replaceAll('"', '""')}"`;
      const filter = (columns: string, words: string) => (scoped ? `${project} AND {${columns}}: (${words})` : `{${columns}}: (${words})`);
      /**
       * Joins the candidates FTS5 picked (`picked`: rowid and rank, best first, at most `depth`) to
       * their chunk and source, keeping the project's visible ones; looks deeper when too few pass.
       */
      const read = async (picked: (depth: number) => RawBuilder<unknown>, first: number): Promise<{ hits: KnowledgeHit[]; total: number }> => {
        for (let depth = first; ; depth *= 8) {
          // CROSS JOIN keeps SQLite from starting at the project's chunks instead of the candidates.
          const { rows } = await sql<ChunkRow & { project_id: string; visible: number; total: number }>`
            select c.id, c.project_id, c.source_id, c.title, c.heading_path, c.url, c.text,
                   -f.rank as score, s.id is not null as visible, f.total
            from (${picked(depth)}) f
            cross join knowledge_chunks c
            left join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            where c.rowid = f.rowid
            order by f.rank, f.rowid`.execute(db);
          const found = rows.filter((r) => r.project_id === projectId && r.visible);
          if (found.length >= limit || rows.length < depth) return { hits: found.map(chunkHit), total: Number(rows[0]?.total ?? 0) };
        }
      };
      // FTS5 ranks while it reads, in rowid order: a sub-select with a LIMIT and no ORDER BY reads
      // (and ranks) only that many matches, which the outer query then sorts.
      const firstMatches = (match: string, cap: number) => (depth: number) =>
        sql`select rowid, rank, count(*) over () as total
            from (select rowid, rank from knowledge_fts where knowledge_fts match ${match} limit ${cap})
            order by rank limit ${depth}`;
      const dialect: FullTextDialect = {
        all: (exprs) => (exprs.length === 1 ? exprs[0]! : `(${exprs.join(' AND ')})`),
        any: (exprs) => exprs.join(' OR '),
        ranked: async (words, depth) =>
          (await read((d) => sql`select rowid, rank, 0 as total from knowledge_fts where knowledge_fts match ${filter('title headings text', words)} order by rank limit ${d}`, depth)).hits,
        sampled: async (words, depth, cap) => {
          const { hits, total } = await read(firstMatches(filter('title headings text', words), cap + 1), Math.min(depth, cap));
          return { hits, cut: total > cap };
        },
        headed: async (words, depth, cap) => (await read(firstMatches(filter('title headings', words), cap), Math.min(depth, cap))).hits,
      };
      // Each phrase quoted (words are letters and digits only); a group is any of its phrases.
      const quoted = groups.map((alts) => {
        const phrases = alts.map((words) => `"${words.join(' ')}"`);
        return phrases.length === 1 ? phrases[0]! : `(${phrases.join(' OR ')})`;
      });
      return tieredSearch(dialect, quoted, limit, candidates, matches && groups.map(matches));
    },
  };
}
