/**
 * Child process of the API benchmark: the real app on a fresh SQLite file, with one project whose
 * rate limits are raised so the benchmark measures the server rather than 429s. Prints
 * `{port, publicKey}` once listening.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDeps } from '../src/deps.js';
import { announceReady } from './lib.js';
import { secretBox } from '../src/lib/secret-box.js';
import { createProject } from '../src/projects/projects.js';
import { createConversation } from '../src/conversations/conversations.js';
import { appendMessage } from '../src/conversations/messages.js';

const dir = mkdtempSync(join(tmpdir(), 'answerdesk-bench-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, 'bench.db')}`,
  ANSWERDESK_DEMO: 'false',
});
const deps = await openDeps(config);
const created = await createProject(deps.store.db, secretBox(deps.config), {
  name: 'Bench',
  settings: { rateLimits: { chat: 1_000_000, session: 1_000_000, general: 1_000_000 } },
});
for (let i = 0; i < 20; i++) {
  const conv = await createConversation(deps.store.db, created.project.id, 'bench-user');
  await appendMessage(deps.store.db, conv, { role: 'user', content: `Where is my order #${i}?`, status: 'complete' });
  await appendMessage(deps.store.db, conv, { role: 'assistant', content: 'It shipped yesterday.', status: 'complete' });
}
const app = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as { port: number };
announceReady({ port, publicKey: created.publicKey });
