import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { base62 } from '../../src/lib/ids.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { DialectCase } from '../helper.js';

const BIN = resolve(import.meta.dirname, '../../bin/answerdesk.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `answerdesk` command in its own process, optionally feeding standard input. */
export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      if (typeof code !== 'number') return fail(err);
      done({ code, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

export interface CliDatabase {
  /** The test's own store on the database the CLI uses. */
  store: Store;
  /** A temporary directory for the test's files (and the SQLite file). */
  dir: string;
  /**
   * What the CLI process needs to reach that database: the URL (on PostgreSQL with the test's own
   * schema through libpq's `options` parameter, which pg passes on) and a connect timeout that
   * allows for a loaded machine (two test workers, each command compiling TypeScript).
   */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A fresh database for CLI tests: a SQLite file in a temporary directory, or a PostgreSQL schema. */
export async function openCliDatabase(dialect: DialectCase): Promise<CliDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'answerdesk-cli-'));
  if (dialect.name === 'sqlite') {
    const url = `sqlite:${join(dir, 'cli.db')}`;
    const store = await openStore(url);
    return {
      store,
      dir,
      env: { DATABASE_URL: url },
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_cli_${base62(10).toLowerCase()}`;
  const store = await openStore(dialect.url, { schema });
  const url = `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    store,
    dir,
    env: { DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: '30000' },
    async close() {
      await store.close();
      const client = new pg.Client({ connectionString: dialect.url });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
