import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from '../../test/helper.js';

describe.each(dialects)('the store ($name)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('reads counts as numbers, and leaves the process-wide pg type parsers as they were', async () => {
    const int8 = pg.types.builtins.INT8;
    const before = pg.types.getTypeParser(int8);
    t = await createTestApp({ dialect });
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from projects`.execute(t.deps.store.db);
    expect(rows[0]!.n).toBe(0);
    // Other code in the process (another pg user, a test's own client) still gets pg's defaults.
    expect(pg.types.getTypeParser(int8)).toBe(before);
    expect(pg.types.getTypeParser(int8)('9007199254740993')).toBe('9007199254740993');
  });
});
