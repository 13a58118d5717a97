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

describe.runIf(dialects.some((d) => d.name === 'postgres'))('migrations beside other schemas (postgres)', () => {
  const url = dialects.find((d) => d.name === 'postgres')?.url ?? '';

  it('start while other installs create and drop their schemas in the same database', async () => {
    const churn = new pg.Client({ connectionString: url });
    await churn.connect();
    let stop = false;
    // Another client keeps creating and dropping schemas, as parallel test runs and installs do.
    const churning = (async () => {
      for (let i = 0; !stop && i < 5000; i++) {
        const name = `churn_${process.pid}_${i}`;
        // Separate statements, each committed: other connections see the schema come and go.
        await churn.query(`create schema ${name}`);
        await churn.query(`create table ${name}.t (id int)`);
        await churn.query(`drop schema ${name} cascade`);
      }
    })();
    try {
      for (let i = 0; i < 6; i++) {
        const app = await createTestApp({ dialect: dialects.find((d) => d.name === 'postgres')! });
        await app.close();
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
  });

  it('the migrator sees only its own schema', async () => {
    const { CatalogIntrospector } = await import('./index.js');
    const { Kysely, PostgresDialect } = await import('kysely');
    const t = await createTestApp({ dialect: dialects.find((d) => d.name === 'postgres')! });
    try {
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.deps.store.db)).rows[0]!.s;
      const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 1 });
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
      try {
        const tables = await new CatalogIntrospector(db).getTables();
        expect(tables.map((x) => x.name)).toContain('projects');
        expect(new Set(tables.map((x) => x.schema))).toEqual(new Set([schema]));
      } finally {
        await db.destroy();
      }
    } finally {
      await t.close();
    }
  });
});
