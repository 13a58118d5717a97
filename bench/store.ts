import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { base62 } from '../src/lib/ids.js';
import { createRateLimiter } from '../src/limits/index.js';
import type { Store } from '../src/store/index.js';
import { openStore } from '../src/store/index.js';

/**
 * App deps on a throwaway database for one benchmark: a temporary SQLite file, or a fresh schema in
 * the PostgreSQL database at `url`; `close()` removes either. `env` overrides the environment.
 */
export async function openBench(kind: 'sqlite' | 'postgres', url: string, env: Record<string, string | undefined> = {}) {
  const schema = kind === 'postgres' ? `bench_${base62(10).toLowerCase()}` : undefined;
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'answerdesk-bench-')) : null;
  const dbUrl = kind === 'sqlite' ? `sqlite:${join(dir!, 'bench.db')}` : url;
  const store = await openStore(dbUrl, { schema });
  const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: 'silent', ANSWERDESK_DEMO: 'false', ...env });
  const deps = createDeps(config, store, await createRateLimiter(undefined));
  return {
    deps,
    async close() {
      await deps.limiter.close();
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (schema) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      }
    },
  };
}

/** Waits until no source of the project is pending or processing, checking every `pollMs`. */
export async function waitAllReady(store: Store, projectId: string, pollMs = 200): Promise<void> {
  for (;;) {
    const pending = await store.db
      .selectFrom('knowledge_sources')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('status', 'in', ['pending', 'processing'])
      .executeTakeFirstOrThrow();
    if (Number(pending.n) === 0) return;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
