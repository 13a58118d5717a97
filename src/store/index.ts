import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Cheap round trip used by /ready. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL only: the schema to use (created when missing). Tests give each app its own. */
  schema?: string;
}

/**
 * Opens the database named by `url` (`sqlite:<path>`, `sqlite::memory:` or `postgres://…`) and
 * brings its schema up to date.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  const store = url.startsWith('sqlite:') ? openSqlite(url.slice('sqlite:'.length)) : await openPostgres(url, options);
  try {
    await migrate(store.db, options.schema);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

function openSqlite(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusePreparedStatements(database) }) });
  return {
    db,
    dialect: 'sqlite',
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/**
 * Kysely prepares every query anew, and SQLite's parse and plan cost more than running most of our
 * queries (the key lookup on every request, for one). Statements are reused by SQL text; one that is
 * mid-iteration (a streamed query) is never handed out twice. SQLite re-prepares a cached statement
 * by itself after a schema change.
 */
function reusePreparedStatements(database: SQLite.Database, max = 1000): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = database.prepare.bind(database);
  database.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached && !cached.busy) return cached;
    const stmt = prepare(source);
    if (!cached && cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(source, stmt);
    return stmt;
  }) as typeof database.prepare;
  return database;
}

async function openPostgres(url: string, { schema }: StoreOptions): Promise<Store> {
  if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`Invalid schema name: ${schema}`);
  if (schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // Integer counts come back as strings from `count(*)`; parse int8 so rows read the same as SQLite.
  pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

async function migrate(db: Kysely<any>, schema?: string): Promise<void> {
  // With a schema of its own, the migrator must look for its tables there: otherwise it finds the
  // bookkeeping tables of another schema in the same database and skips creating its own.
  const migrator = new Migrator({ db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
}

/** True when `err` is a unique-constraint violation, in either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e?.message ?? '');
}

export type { Database } from './schema.js';
