import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { base62 } from '../src/lib/ids.js';
import { openStore } from '../src/store/index.js';
import { ADMIN_TOKEN, type DialectCase } from './helper.js';
import { waitFor } from './wait.js';

const BIN = resolve(import.meta.dirname, '../bin/answerdesk.js');

/** The key of secrets at rest in a server process, unless the test gives its own. */
export const SERVER_SECRET_KEY = 'test-secret-key-for-server-processes';

/**
 * A database of its own for the server processes of one test file, and the URL they open it by: a
 * SQLite file in `dir`, or a PostgreSQL schema named from `prefix` (dropped by `drop`), with
 * `applicationName` on the connections when a test looks for them in pg_stat_activity.
 */
export async function serverDatabase(dialect: DialectCase, dir: string, prefix: string, applicationName?: string) {
  if (dialect.name === 'sqlite') {
    const url = `sqlite:${join(dir, 'server.db')}`;
    return { url, store: await openStore(url), drop: async () => {} };
  }
  const schema = `${prefix}_${base62(10).toLowerCase()}`;
  const store = await openStore(dialect.url, { schema });
  const params = new URLSearchParams({ options: `-c search_path=${schema}`, ...(applicationName ? { application_name: applicationName } : {}) });
  return {
    url: `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}${params}`,
    store,
    drop: async () => {
      const client = new pg.Client({ connectionString: dialect.url });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

/** `answerdesk serve` running in a process of its own, as in production. */
export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  base: string;
  child: ChildProcess;
  /** Every JSON log line so far. */
  logs(): Array<Record<string, unknown> & { msg: string }>;
  /** Everything written so far, as written. */
  output(): { stdout: string; stderr: string };
  /** Waits (bounded) for a log line with this message. */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Sends `signal` and waits (bounded) until the process has ended; resolves with its exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

/** Starts the real server (the CLI's `serve`) on a free local port with `env` on top of quiet defaults. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ANSWERDESK_DEMO: 'false',
      ANSWERDESK_ADMIN_TOKEN: ADMIN_TOKEN,
      // A fixed key, so no key file is written into the working directory.
      ANSWERDESK_SECRET_KEY: SERVER_SECRET_KEY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown> & { msg: string }> = [];
  let stderr = '';
  let stdout = '';
  let partial = '';
  child.stdout!.on('data', (data: Buffer) => {
    stdout += data.toString('utf8');
    partial += data.toString('utf8');
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const line of complete) {
      try {
        lines.push(JSON.parse(line));
      } catch {
        // Not a JSON log line (LOG_FORMAT=pretty): kept in output() only.
      }
    }
  });
  child.stderr!.on('data', (data: Buffer) => void (stderr += data.toString('utf8')));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done((exitCode = code))));

  const waitForLog = (msg: string, timeoutMs = 20_000) =>
    waitFor(
      () => {
        if (exitCode !== undefined) throw new Error(`server exited (${exitCode}) before logging "${msg}": ${stderr}`);
        return lines.find((l) => l.msg === msg);
      },
      timeoutMs,
      `log line "${msg}"`,
    );

  // Compiling the TypeScript on the fly takes a few seconds on a busy machine.
  // Found in JSON and in pretty log lines alike.
  const listening = await waitFor(
    () => {
      if (exitCode !== undefined) throw new Error(`server exited (${exitCode}) at start: ${stderr}`);
      return /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
    },
    60_000,
    'server start',
  );
  return {
    base: listening[1]!,
    child,
    logs: () => lines,
    output: () => ({ stdout, stderr }),
    waitForLog,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
      if (exitCode === undefined) child.kill(signal);
      return waitFor(async () => (exitCode !== undefined ? { code: exitCode } : null), timeoutMs, 'server exit').then((r) => r.code);
    },
  };
}
