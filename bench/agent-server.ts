/**
 * Child process of the agent benchmark: the real app on a fresh SQLite file, one project whose model
 * is `openai-compatible:bench` (OPENAI_COMPATIBLE_BASE_URL points at the bench's fake upstream) and
 * whose rate limits are raised, so the benchmark measures the server rather than 429s. Prints
 * `{port, publicKey}` once listening; answers the bench's `usage` messages (CPU time, heap).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { announceReady, answerUsageRequests } from './lib.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDeps } from '../src/deps.js';
import { secretBox } from '../src/lib/secret-box.js';
import { createProject } from '../src/projects/projects.js';

const dir = mkdtempSync(join(tmpdir(), 'answerdesk-bench-agent-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, 'bench.db')}`,
  ANSWERDESK_DEMO: 'false',
  LOG_LEVEL: 'warn',
  // 2,000 answers of one project are held open at once: above the default per-project cap.
  ANSWERDESK_MAX_ANSWERS: process.env.ANSWERDESK_MAX_ANSWERS ?? '10000',
  ANSWERDESK_MAX_ANSWERS_PER_PROJECT: process.env.ANSWERDESK_MAX_ANSWERS_PER_PROJECT ?? '10000',
});
const deps = await openDeps(config);
const created = await createProject(deps.store.db, secretBox(deps.config), {
  name: 'Bench',
  settings: {
    model: 'openai-compatible:bench',
    rateLimits: { chat: 1_000_000, session: 1_000_000, general: 1_000_000 },
  },
});
const app = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as { port: number };
answerUsageRequests();
announceReady({ port, publicKey: created.publicKey });
