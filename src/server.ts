import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { prepareSecretKey } from './actions/secret-box.js';
import { buildApp } from './app.js';
import { createProject, listProjects } from './api/projects/service.js';
import type { Config } from './config.js';
import type { AppDeps } from './http/context.js';
import { addProjectDocs } from './knowledge/demo.js';
import { startKnowledgeWorker } from './knowledge/jobs.js';
import { createRateLimiter } from './limits/index.js';
import { openStore } from './store/index.js';

/** Opens the infrastructure named by the config (database, rate-limit store). */
export async function openDeps(config: Config): Promise<AppDeps> {
  const store = await openStore(config.DATABASE_URL);
  try {
    const limiter = await createRateLimiter(config.REDIS_URL);
    return { config, store, limiter };
  } catch (err) {
    await store.close();
    throw err;
  }
}

export interface DemoProject {
  projectId: string;
  publicKey: string;
  secretKey: string;
  hmacSecret: string;
}

/**
 * On the very first start (no project at all) creates a demo project so that `npm start` gives
 * something to talk to. Later starts leave the database alone.
 */
export async function ensureDemoProject(deps: AppDeps): Promise<DemoProject | null> {
  if (!deps.config.ANSWERDESK_DEMO) return null;
  if ((await listProjects(deps.store.db)).length > 0) return null;
  const created = await createProject(deps.store.db, {
    name: 'AnswerDesk Demo',
    settings: {
      instructions: 'You are the AnswerDesk demo assistant. Answer questions about AnswerDesk from its documentation.',
      widget: { primaryColor: '#4f46e5', fabText: 'Ask us' },
    },
  });
  await addProjectDocs(deps, created.project.id);
  return {
    projectId: created.project.id,
    publicKey: created.publicKey,
    secretKey: created.secretKey,
    hmacSecret: created.hmacSecret,
  };
}

/** Starts the HTTP server and wires graceful shutdown on SIGINT/SIGTERM. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const deps = await openDeps(config);
  const app = await buildApp(deps);
  prepareSecretKey(config, app.log);
  const demo = await ensureDemoProject(deps);
  const knowledgeWorker = startKnowledgeWorker(deps, { log: app.log });
  await app.listen({ port: config.PORT, host: config.HOST });
  const base = config.ANSWERDESK_PUBLIC_URL ?? `http://localhost:${(app.server.address() as { port: number }).port}`;
  if (demo) printDemo(base, demo);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    // Logs are written asynchronously: let the last lines reach stdout before exiting.
    await new Promise<void>((resolve) => (app.log as Logger).flush(() => resolve()));
    await knowledgeWorker.stop();
    await deps.limiter.close();
    await deps.store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  return app;
}

function printDemo(base: string, demo: DemoProject): void {
  // Printed once, to the terminal of whoever ran the first start: keys are never logged.
  process.stdout.write(
    [
      '',
      'AnswerDesk demo project created (shown once, keep it):',
      `  project id   ${demo.projectId}`,
      `  public key   ${demo.publicKey}`,
      `  secret key   ${demo.secretKey}`,
      `  HMAC secret  ${demo.hmacSecret}`,
      `  API          ${base}/api/v1`,
      `  API docs     ${base}/docs`,
      `  demo page    ${base}/demo?key=${demo.publicKey}`,
      '',
    ].join('\n') + '\n',
  );
}
