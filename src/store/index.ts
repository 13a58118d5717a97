import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type KyselyConfig,
  type PostgresDialectConfig,
  type PostgresPool,
  type PostgresPoolClient,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { NotFound } from '../lib/errors.js';
import { isUnavailable } from './faults.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Cheap round trip used by /ready. */
  ping(): Promise<void>;
  /**
   * Calls `listener` when a connection fails while no query is waiting on it (an idle pooled
   * connection cut by a failover, a restart or a proxy's idle timeout). The pool has already dropped
   * it; the next query opens a new one. Returns the unsubscribe function.
   */
  onConnectionLost(listener: (err: Error) => void): () => void;
  /** PostgreSQL: the pool's connections (open, idle) and the callers waiting for one; SQLite: null. */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL only: the schema to use (created when missing). Tests give each app its own. */
  schema?: string;
  /** PostgreSQL: `application_name` of the connections, shown in pg_stat_activity. A value in the URL wins. */
  applicationName?: string;
  /** PostgreSQL: longest wait for a connection (opening one, or a free one from a full pool). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: `statement_timeout` of every statement but migrations. The client also gives up on a
   * connection that stays silent a second longer (dropped packets) and discards it.
   */
  statementTimeoutMs?: number;
  /** SQLite: how long a write waits for another connection's lock before failing with SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Called after each statement of the app's queries (not migrations) with its SQL text and time: tracing. */
  onQuery?: (sqlText: string, durationMs: number, failed: boolean) => void;
}

/** Kysely's log hook for `onQuery`; none (and no timing) without it. */
function queryLog(onQuery: StoreOptions['onQuery']): KyselyConfig['log'] {
  if (!onQuery) return undefined;
  return (event) => onQuery(event.query.sql, event.queryDurationMillis, event.level === 'error');
}

/** The store options the configuration asks for. */
export function storeOptions(config: Config): StoreOptions {
  return {
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS,
  };
}

/** Margin past statement_timeout after which the client stops waiting for the server's answer. */
const READ_TIMEOUT_MARGIN_MS = 1000;

/** The file a `sqlite:<path>` URL names; null for in-memory SQLite and for PostgreSQL. */
export function sqliteFile(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? null : path;
}

/**
 * Opens the database named by `url` (`sqlite:<path>`, `sqlite::memory:` or `postgres://…`) and
 * brings its schema up to date.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const store = openSqlite(url.slice('sqlite:'.length), options);
    try {
      await migrate(store.db, options.schema);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }
  return openPostgres(url, options);
}

function openSqlite(path: string, { busyTimeoutMs = 5000, onQuery }: StoreOptions): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  database.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusePreparedStatements(database) }), log: queryLog(onQuery) });
  return {
    db,
    dialect: 'sqlite',
    async ping() {
      await sql`select 1`.execute(db);
    },
    // One connection in this process, and no network between it and the file.
    onConnectionLost: () => () => {},
    poolStats: () => null,
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

/**
 * Type parsers of the store's own connections. Counts (`count(*)`, int8) come back from pg as
 * strings; read as numbers, rows look the same as SQLite's. Set per pool, not on pg's process-wide
 * parsers, so no other pg client in the process is affected.
 */
const rowTypes = new pg.TypeOverrides();
rowTypes.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

async function openPostgres(url: string, options: StoreOptions): Promise<Store> {
  const { schema, connectTimeoutMs = 5000, statementTimeoutMs = 10_000 } = options;
  if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`Invalid schema name: ${schema}`);
  const base: pg.PoolConfig = {
    connectionString: url,
    application_name: options.applicationName ?? 'answerdesk',
    connectionTimeoutMillis: connectTimeoutMs,
    // Probes idle connections, so one whose peer vanished without a word is noticed and dropped.
    keepAlive: true,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  };
  if (schema) {
    const admin = new pg.Client({ ...base, options: undefined });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${schema}`);
    } finally {
      await admin.end();
    }
  }
  // Migrations may build indexes on large tables: they run on a connection of their own, without the
  // statement timeout meant for requests.
  const migrationPool = new pg.Pool({ ...base, max: 1 });
  // A connection cut while idle between two migrations fails the next one; it must not end the process.
  migrationPool.on('error', () => {});
  const migrations = new Kysely<any>({ dialect: new MigrationDialect({ pool: guardedPool(migrationPool) }) });
  try {
    // A schema chosen in the URL (`options=-c search_path=…`) is where the bookkeeping tables belong
    // too: Kysely would otherwise look for them in `public`, find another install's, and skip ours.
    const current = schema ?? (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(migrations)).rows[0]?.schema ?? undefined;
    await migrate(migrations, current === 'public' ? undefined : current);
  } catch (err) {
    throw explainConnectFailure(err, url);
  } finally {
    await migrations.destroy();
  }

  const pool = new pg.Pool({
    ...base,
    types: rowTypes,
    max: 10,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + READ_TIMEOUT_MARGIN_MS,
  });
  const listeners = new Set<(err: Error) => void>();
  // Without a listener, an idle connection cut by the server (pg_terminate_backend, failover, restart,
  // PgBouncer's idle timeout) is an unhandled 'error' event, which ends the process.
  pool.on('error', (err) => {
    for (const listener of listeners) listener(err);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }), log: queryLog(options.onQuery) });
  return {
    db,
    dialect: 'postgres',
    async ping() {
      await sql`select 1`.execute(db);
    },
    onConnectionLost(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      await db.destroy();
    },
  };
}

/**
 * The pool as Kysely sees it, with two guards pg-pool leaves to its user:
 * - a connection that fails while checked out between two queries (inside a transaction) emits
 *   'error' with no pool listener attached; it is caught here instead of ending the process;
 * - a connection whose query hit the client-side read timeout still has that query in flight, so
 *   it is destroyed on release rather than handed to the next caller (Kysely releases without an
 *   error). So is any connection that failed with a connection fault.
 */
function guardedPool(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken: Error | undefined;
      const onError = (err: Error) => void (broken ??= err);
      client.on('error', onError);
      return {
        query: ((...args: Parameters<pg.PoolClient['query']>) => {
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          if (!(result instanceof Promise)) return result; // a cursor
          return result.catch((err: unknown) => {
            if (isUnavailable(err)) broken ??= err as Error;
            throw err;
          });
        }) as PostgresPoolClient['query'],
        release() {
          client.removeListener('error', onError);
          client.release(broken);
        },
      };
    },
    end: () => pool.end(),
  };
}

/**
 * What the migrator asks of the catalog (does this schema, this table exist?), answered from the
 * connection's own schema only. Kysely's stock PostgreSQL introspector reads every schema's columns
 * and calls has_schema_privilege() on each schema name; a schema dropped by another connection while
 * that query runs (other installs, or test runs, sharing the database) then fails it with "schema …
 * does not exist", and the start fails with it.
 */
export class CatalogIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string }>`
      select tablename as name, schemaname as schema from pg_catalog.pg_tables
      where schemaname = any (current_schemas(false))`.execute(this.db);
    return rows.map((r) => ({ name: r.name, schema: r.schema, isView: false, columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

/** PostgreSQL as the migrator sees it: the stock dialect with the catalog introspector above. */
class MigrationDialect extends PostgresDialect {
  constructor(config: PostgresDialectConfig) {
    super(config);
  }

  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CatalogIntrospector(db);
  }
}

async function migrate(db: Kysely<any>, schema?: string): Promise<void> {
  // With a schema of its own, the migrator must look for its tables there: otherwise it finds the
  // bookkeeping tables of another schema in the same database and skips creating its own.
  const migrator = new Migrator({ db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    const which = failed?.migrationName ? ` ${failed.migrationName}` : '';
    throw new Error(`Database migration${which} failed: ${cause}`, { cause: error });
  }
}

/**
 * The first connection's failure in words a new user can act on: a database that does not exist
 * yet names the `createdb` command that makes it; a server that refuses connections is named.
 * Anything else is returned as it was.
 */
export function explainConnectFailure(err: unknown, url: string): unknown {
  const cause = (err as { cause?: unknown })?.cause ?? err;
  const code = (cause as { code?: string })?.code;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return err;
  }
  const name = decodeURIComponent(target.pathname.slice(1)) || decodeURIComponent(target.username) || 'postgres';
  const host = target.hostname || 'localhost';
  const port = target.port || '5432';
  if (code === '3D000') {
    const user = target.username ? ` -U ${decodeURIComponent(target.username)}` : '';
    return new Error(
      `PostgreSQL database "${name}" does not exist. Create it first, e.g.:\n  createdb -h ${host} -p ${port}${user} ${name}\nthen start again (AnswerDesk creates its tables itself).`,
      { cause },
    );
  }
  if (code === 'ECONNREFUSED') {
    return new Error(`Cannot connect to PostgreSQL at ${host}:${port} (connection refused). Is the server running, and is DATABASE_URL right?`, { cause });
  }
  return err;
}

/** True when `err` is a unique-constraint violation, in either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e?.message ?? '');
}

/**
 * PostgreSQL chose this transaction as the victim of a deadlock: it was rolled back whole, and
 * running it again is the remedy the database expects.
 */
function isDeadlock(err: unknown): boolean {
  return (err as { code?: string })?.code === '40P01';
}

/** Tries of a transaction that PostgreSQL picks as a deadlock's victim (retryDeadlock). */
const DEADLOCK_ATTEMPTS = 5;

/** Longest wait before the second try, in ms; doubled for each try after it, and taken at random up to it. */
const DEADLOCK_BACKOFF_MS = 20;

/**
 * Runs `transaction` (a whole transaction, nothing written outside it) again when PostgreSQL picks
 * it as a deadlock's victim: it was rolled back whole, and the next try sees what the winner
 * committed (a row gone: 404). For writes whose locks no one order can serve, such as a project's
 * delete, whose cascade locks its children after the project, and a child's insert, whose foreign
 * key locks the project after the child's parent. Each next try waits a random while first (full
 * jitter), so that it starts after the winner has committed rather than into the next writer of a
 * burst: run at once, a project's delete among a dozen writes to it lost three deadlocks in a row.
 */
export async function retryDeadlock<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (!isDeadlock(err) || attempt >= DEADLOCK_ATTEMPTS) throw err;
      await sleep(Math.random() * DEADLOCK_BACKOFF_MS * 2 ** (attempt - 1));
    }
  }
}

/** A foreign key that names a row no longer there (a project deleted while something was added to it). */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * What an insert into one of a project's tables throws, as its caller should answer: a foreign key
 * to a project no longer there (deleted since the route found it) is 404 `Project not found`.
 */
export function projectGone(err: unknown): unknown {
  return isForeignKeyViolation(err) ? NotFound('Project not found') : err;
}

export type { Database } from './schema.js';
