import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { FullTextIndex, RankedChunk } from './index.js';
import { queryTerms } from './query.js';

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
    async search(projectId, query, limit) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const scoped = !(await isDominant(projectId));
      // The random part of the id, as migration 006 indexes it; FTS5 strings escape `"` by doubling.
      const project = `{project}: "${projectId.slice(projectId.indexOf('_') + 1).replaceAll('"', '""')}"`;
      const run = async (words: string) => {
        const match = scoped ? `${project} AND {title headings text}: (${words})` : `{title headings text}: (${words})`;
        for (let depth = Math.max(limit * 4, 20); ; depth *= 8) {
          // CROSS JOIN keeps SQLite from starting at the project's chunks instead of the candidates.
          const { rows } = await sql<Row & { project_id: string; visible: number }>`
            select c.id, c.project_id, c.source_id, c.title, c.heading_path, c.url, c.text,
                   -f.rank as score, s.id is not null as visible
            from (select rowid, rank from knowledge_fts where knowledge_fts match ${match} order by rank limit ${depth}) f
            cross join knowledge_chunks c
            left join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
            where c.rowid = f.rowid
            order by f.rank, f.rowid`.execute(db);
          const found = rows.filter((r) => r.project_id === projectId && r.visible);
          if (found.length >= limit || rows.length < depth) return found.slice(0, limit).map(toRanked);
        }
      };
      const quoted = terms.map((t) => `"${t}"`);
      return withFallback(
        limit,
        terms.length,
        () => run(quoted.join(' AND ')),
        () => run(quoted.join(' OR ')),
        () => run(termPairs(quoted).map(([a, b]) => `(${a} AND ${b})`).join(' OR ')),
      );
    },
  };
}

/** Queries of up to this many words get the middle tier (pairs grow quadratically). */
const MAX_PAIR_TERMS = 8;

/** Every pair of the terms, for the "at least two words" tier: `[[a, b], [a, c], [b, c]]`. */
export function termPairs(terms: string[]): Array<[string, string]> {
  return terms.flatMap((a, i) => terms.slice(i + 1).map((b): [string, string] => [a, b]));
}

/**
 * Chunks holding every word of the query first; when they are fewer than `limit`, chunks holding
 * at least two of the words (queries of three to eight words), and only then the broad any-word
 * query, each tier filling the rest. Ranking all chunks that share one common word with the query
 * costs time proportional to the corpus; the narrower tiers keep the usual question cheap, and the
 * last keeps recall for the rest.
 */
export async function withFallback(
  limit: number,
  termCount: number,
  all: () => Promise<RankedChunk[]>,
  any: () => Promise<RankedChunk[]>,
  two?: () => Promise<RankedChunk[]>,
): Promise<RankedChunk[]> {
  const tiers = [all, ...(two && termCount >= 3 && termCount <= MAX_PAIR_TERMS ? [two] : []), ...(termCount > 1 ? [any] : [])];
  let hits: RankedChunk[] = [];
  for (const tier of tiers) {
    if (hits.length >= limit) break;
    const seen = new Set(hits.map((h) => h.chunkId));
    const more = (await tier()).filter((h) => !seen.has(h.chunkId));
    // Earlier tiers keep their place ahead of later ones, whatever the raw scores say.
    const floor = Math.min(...hits.map((h) => h.score), Infinity);
    hits = [...hits, ...more.map((h) => ({ ...h, score: Number.isFinite(floor) ? Math.min(h.score, floor) : h.score }))];
  }
  return hits.slice(0, limit);
}
