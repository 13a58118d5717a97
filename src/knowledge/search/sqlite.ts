import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { chunkHit, type ChunkRow } from './chunk-hit.js';
import { groupsOf, termPairs, withFallback, type FullTextIndex } from './full-text.js';

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
 * the checks, the search looks deeper, so the result is the same as ranking every match.
 */
export function sqliteFullText(db: Kysely<Database>): FullTextIndex {
  const shares = new Map<string, { dominant: boolean; until: number }>();
  const isDominant = async (projectId: string) => {
    const cached = shares.get(projectId);
    if (cached && cached.until > Date.now()) return cached.dominant;
    const { rows } = await sql<{ mine: number; total: number }>`
      select (select count(*) from knowledge_chunks where project_id = ${projectId}) as mine,
             (select count(*) from knowledge_chunks) as total`.execute(db);
    const { mine, total } = rows[0]!;
    const dominant = total > 0 && mine / total >= DOMINANT_SHARE;
    shares.set(projectId, { dominant, until: Date.now() + SHARE_TTL_MS });
    return dominant;
  };

  return {
    async search(projectId, query, limit, candidates = limit) {
      const groups = groupsOf(query);
      if (groups.length === 0) return [];
      const scoped = !(await isDominant(projectId));
      // The random part of the id, as migration 006 indexes it; FTS5 strings escape `"` by doubling.
      const project = `{project}: "${projectId.slice(projectId.indexOf('_') + 1).replaceAll('"', '""')}"`;
      const run = async (words: string) => {
        const match = scoped ? `${project} AND {title headings text}: (${words})` : `{title headings text}: (${words})`;
        for (let depth = Math.max(limit * 4, 20, candidates); ; depth *= 8) {
          // CROSS JOIN keeps SQLite from starting at the project's chunks instead of the candidates.
          const { rows } = await sql<ChunkRow & { project_id: string; visible: number }>`
            select c.id, c.project_id, c.source_id, c.title, c.heading_path, c.url, c.text,
                   -f.rank as score, s.id is not null as visible
            from (select rowid, rank from knowledge_fts where knowledge_fts match ${match} order by rank limit ${depth}) f
            cross join knowledge_chunks c
            left join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            where c.rowid = f.rowid
            order by f.rank, f.rowid`.execute(db);
          const found = rows.filter((r) => r.project_id === projectId && r.visible);
          if (found.length >= limit || rows.length < depth) return found.slice(0, Math.max(limit, candidates)).map(chunkHit);
        }
      };
      // Each phrase quoted (words are letters and digits only); a group is any of its phrases.
      const quoted = groups.map((alts) => {
        const phrases = alts.map((words) => `"${words.join(' ')}"`);
        return phrases.length === 1 ? phrases[0]! : `(${phrases.join(' OR ')})`;
      });
      return withFallback(
        limit,
        groups.length,
        candidates,
        () => run(quoted.join(' AND ')),
        () => run(quoted.join(' OR ')),
        () => run(termPairs(quoted).map(([a, b]) => `(${a} AND ${b})`).join(' OR ')),
      );
    },
  };
}
