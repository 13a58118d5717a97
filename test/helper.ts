import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { createDeps, type AppDeps } from '../src/deps.js';
import { createEventBus } from '../src/events/bus.js';
import { base62 } from '../src/lib/ids.js';
import { createRateLimiter } from '../src/limits/index.js';
import type { ProjectSettings } from '../src/projects/project.js';
import { secretBox, type SecretBox } from '../src/lib/secret-box.js';
import { createProject as createProjectRow, type CreatedProject } from '../src/projects/projects.js';
import { openStore, storeOptions } from '../src/store/index.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/**
 * The key of action header secrets in every test app (a test may set its own). Without one, an app
 * over PostgreSQL would generate `./data/secret.key` in the working tree; one key for all also lets
 * apps that share a database read each other's secrets, as the nodes of a deployment do.
 */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef';

const boxes = new Map<string, SecretBox>();
/**
 * The secret box of a key (the test apps' one by default), for rows a test writes without an app:
 * projects made straight in a database that a server process or the CLI then reads.
 */
export function testSecretBox(key = TEST_SECRET_KEY): SecretBox {
  let box = boxes.get(key);
  if (!box) boxes.set(key, (box = secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: key })));
  return box;
}

export interface DialectCase {
  name: 'sqlite' | 'postgres';
  url: string;
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (STYLE §8: same suite, both databases). */
export const dialects: DialectCase[] = [
  { name: 'sqlite', url: 'sqlite::memory:' },
  ...(process.env.TEST_DATABASE_URL ? [{ name: 'postgres' as const, url: process.env.TEST_DATABASE_URL }] : []),
];

/** Memory always; Redis too when TEST_REDIS_URL is set. */
export const limiterKinds: Array<{ name: 'memory' | 'redis'; url?: string }> = [
  { name: 'memory' },
  ...(process.env.TEST_REDIS_URL ? [{ name: 'redis' as const, url: process.env.TEST_REDIS_URL }] : []),
];

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppOptions {
  dialect?: DialectCase;
  /** A Redis URL for the rate limiter; `prefix` lets two apps share (or not share) counts. */
  redisUrl?: string;
  redisPrefix?: string;
  /** Share an already-open store between apps (multi-node tests). */
  store?: AppDeps['store'];
  env?: Record<string, string>;
  logger?: boolean | Record<string, unknown>;
  /** PostgreSQL: application_name of the app's connections, to find them in pg_stat_activity. */
  applicationName?: string;
  /** A Redis URL for the events bus (memory otherwise); apps with the same `eventsPrefix` hear each other. */
  eventsRedisUrl?: string;
  eventsPrefix?: string;
}

/**
 * The whole app over a fresh database: an in-memory SQLite, or a PostgreSQL schema of its own that is
 * dropped on close, so test files can run in parallel against one server.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dialect = options.dialect ?? dialects[0];
  const config = loadConfig({
    ANSWERDESK_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    DATABASE_URL: dialect.url,
    ANSWERDESK_DEMO: 'false',
    ANSWERDESK_SECRET_KEY: TEST_SECRET_KEY,
    // Many tests write rows straight into the database and read them back through the API at once;
    // the per-node caches have their own tests (src/http/cache.test.ts).
    ANSWERDESK_CACHE_TTL_MS: '0',
    ...options.env,
  });
  const schema = dialect.name === 'postgres' && !options.store ? `t_${base62(12).toLowerCase()}` : undefined;
  const store = options.store ?? (await openStore(dialect.url, { schema, applicationName: options.applicationName, ...storeOptions(config) }));
  const limiter = await createRateLimiter(options.redisUrl, options.redisPrefix ?? `test:${base62(10)}`, {
    connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  });
  const events = await createEventBus(options.eventsRedisUrl, { prefix: options.eventsPrefix ?? `test:${base62(10)}:` });
  const deps = createDeps(config, store, limiter, null, events);
  const app = await buildApp(deps, { logger: options.logger ?? false });
  await app.ready();
  return {
    app,
    deps,
    config,
    async close() {
      await app.close();
      // Most documents are read in the parser's worker thread: it ends with the app, not 30 s later.
      await deps.knowledge.parser.close();
      await limiter.close();
      await events.close();
      if (options.store) return;
      await store.close();
      if (schema) {
        const client = new pg.Client({ connectionString: dialect.url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      }
    },
  };
}

/** Factory: a project with its default keys, made through the service (the admin API has its own tests). */
export async function createProject(t: TestApp, settings?: ProjectSettings, name = 'Acme'): Promise<CreatedProject> {
  return createProjectRow(t.deps.store.db, secretBox(t.config), { name, settings });
}

export function auth(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-api-key': key, ...extra };
}

export function adminAuth(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${ADMIN_TOKEN}`, ...extra };
}

/** Sends one user message through the runtime API, as the widget does; the response is the answer stream. */
export function sendMessage(app: FastifyInstance, publicKey: string, conversationId: string, content: string) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/chat/messages',
    headers: auth(publicKey),
    payload: { conversationId, messages: [{ role: 'user', content }] },
  });
}

/**
 * A conversation of the end user `endUserExternalId` with one question answered through the
 * runtime API, and the stored answer's id.
 */
export async function answeredConversation(t: TestApp, publicKey: string, question: string, endUserExternalId = 'cust-1'): Promise<{ conversationId: string; messageId: string }> {
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(publicKey), payload: { endUserExternalId } });
  const conversationId = created.json().conversationId as string;
  const sent = await sendMessage(t.app, publicKey, conversationId, question);
  if (sent.statusCode !== 200) throw new Error(`the question was not answered: ${sent.statusCode} ${sent.body}`);
  const rows = await t.deps.store.db.selectFrom('messages').select(['id', 'role']).where('conversation_id', '=', conversationId).execute();
  return { conversationId, messageId: rows.find((r) => r.role === 'assistant')!.id };
}
