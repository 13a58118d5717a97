import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { packCursor, unpackCursor } from '../lib/cursor.js';
import { ValidationError } from '../lib/errors.js';

/** Where a page starts: after the row with this time and id. */
export interface KeysetAfter {
  time: string;
  id: string;
}

/**
 * The position an opaque cursor holds, or undefined without one. A cursor that is not one of ours
 * is the client's mistake: 400 with `path` (the query parameter that carried it).
 */
export function readCursor(raw: string | undefined, path = 'cursor'): KeysetAfter | undefined {
  if (raw === undefined) return undefined;
  const value = unpackCursor(raw);
  if (Array.isArray(value) && value.length === 2 && isStoredTime(value[0]) && isId(value[1])) {
    return { time: value[0], id: value[1] };
  }
  throw ValidationError([{ path, message: 'Invalid cursor' }]);
}

/**
 * A time as stored (ISO 8601 UTC with milliseconds). Times are compared as text: any other string
 * (`"x"`, `"9999-99-99…"`) would be taken as a position and page through the rows in a wrong order.
 */
function isStoredTime(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value)) return false;
  // A day or an hour out of range parses to NaN, or rolls over to another time (2023-02-30 → 03-02).
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

/** An id as the paged tables hold them (prefixed base62, well under 64 characters). */
function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 64;
}

/**
 * One page of a list ordered newest first by a time column, then by id (both descending): keyset
 * paging, so pages stay stable while rows are added. `columns` names the two columns as the query
 * refers to them (`c.updated_at`); `keyOf` reads them back from a row. `nextCursor` is set when
 * more rows follow.
 */
export async function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: { time: string; id: string },
  keyOf: (row: O) => KeysetAfter,
  page: { limit: number; after?: KeysetAfter },
): Promise<{ rows: O[]; nextCursor?: string }> {
  const time = sql.ref(columns.time);
  const id = sql.ref(columns.id);
  let q = query;
  if (page.after) {
    const { time: t, id: i } = page.after;
    q = q.where(sql<SqlBool>`(${time} < ${t} or (${time} = ${t} and ${id} < ${i}))`);
  }
  const rows = await q.orderBy(time, 'desc').orderBy(id, 'desc').limit(page.limit + 1).execute();
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  if (rows.length <= page.limit || !last) return { rows: shown };
  const key = keyOf(last);
  return { rows: shown, nextCursor: packCursor([key.time, key.id]) };
}
