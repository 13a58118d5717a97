import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { issueSetupToken } from './accounts/setup.js';
import { prepareSecretKey, secretBox, type SecretBox } from './lib/secret-box.js';
import { AnswerInterruptedError } from './agent/in-flight.js';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openDeps, type AppDeps } from './deps.js';
import { createAction } from './actions/actions.js';
import { addDemoHelpCenter } from './knowledge/demo.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './knowledge/jobs.js';
import { serveMetrics } from './lib/metrics.js';
import { sealStoredHmacSecrets } from './projects/hmac-secret.js';
import { createDemoProject, listProjects } from './projects/projects.js';
import { createSkill } from './skills/skills.js';
import { startWebhookWorker, type WebhookWorker } from './webhooks/worker.js';

export interface DemoProject {
  projectId: string;
  publicKey: string;
  secretKey: string;
  hmacSecret: string;
}

/** The demo action's path on this server (GET /demo/shop/orders/:orderId); `{orderId}` is filled by the action call. */
const DEMO_ORDER_PATH = '/demo/shop/orders/{orderId}';
/** The only paths of this server the SSRF guard lets the demo action reach: one order look-up each. */
const DEMO_ORDER_PATH_PATTERN = /^\/demo\/shop\/orders\/NW-\d{6}$/;

/**
 * On the very first start (no project at all) creates a demo project so that `npm start` gives
 * something to talk to: the help center of a fictional shop (demo/shop/articles), an order-tracking
 * action served by this server itself (`origin` is where it listens), and two skills. Later starts
 * leave the database alone, and of nodes starting together on an empty database one makes it.
 */
export async function ensureDemoProject(deps: AppDeps, origin: string): Promise<DemoProject | null> {
  if (!deps.config.ANSWERDESK_DEMO) return null;
  if ((await listProjects(deps.store.db)).length > 0) return null;
  // Null when another node starting at the same moment made it first.
  const created = await createDemoProject(deps.store.db, secretBox(deps.config), {
    name: 'Northwind Goods',
    settings: {
      instructions:
        'You are the support assistant of Northwind Goods, an online shop for home, kitchen and outdoor goods. ' +
        'Answer from the help center, look up orders with track_order, and say so when the help center does not cover a question.',
      widget: { primaryColor: '#0f766e', fabText: 'Ask us' },
    },
  });
  if (!created) return null;
  const projectId = created.project.id;
  await addDemoHelpCenter(deps, projectId);
  // The demo's order look-up is this server's own endpoint, on loopback in a local start: it is let
  // through at call time (the guard allows this origin on that path only), so it is not judged here.
  await createAction(deps.store.db, secretBox(deps.config), projectId, {
    name: 'track_order',
    description: 'Look up the status, carrier, tracking number and estimated delivery of an order by its order number (NW- and six digits).',
    method: 'GET',
    url: `${origin}${DEMO_ORDER_PATH}`,
    headers: {},
    parameters: {
      type: 'object',
      properties: { orderId: { type: 'string', pattern: '^NW-\\d{6}$', description: 'The order number, e.g. NW-204817' } },
      required: ['orderId'],
      additionalProperties: false,
    },
    examples: ['Where is my order?', 'Track my order', 'What is the status of my order?', 'When will my parcel arrive?'],
    timeoutMs: 5000,
    enabled: true,
  }, { allowPrivateNetwork: true });
  await createSkill(deps.store.db, projectId, {
    name: 'Track an order',
    description: 'Where is my parcel? Status, carrier and tracking number of an order.',
    instructions:
      'Ask for the order number (NW- and six digits) if the customer has not given it, then call track_order and tell them the status, ' +
      'the carrier and tracking number, and the estimated delivery date. Orders are found by number only; never ask for a password.',
    enabled: true,
  });
  await createSkill(deps.store.db, projectId, {
    name: 'Return an item',
    description: 'Send something back for a refund, store credit or an exchange.',
    instructions:
      'Check with the returns policy that the item can still be returned (30 days from delivery, unused), then walk the customer ' +
      'through registering the return, packing the item and sending it, citing the help center.',
    enabled: true,
  });
  return {
    projectId,
    publicKey: created.publicKey,
    secretKey: created.secretKey,
    hmacSecret: created.hmacSecret,
  };
}

/**
 * Seals the projects' HMAC secrets that an earlier release stored in clear (nodes starting together
 * each try; a row is sealed once), and says so when some were sealed with another key: this node's
 * ANSWERDESK_SECRET_KEY is then not the one the others use, and its identity checks for those
 * projects fail with that reason instead of rejecting every signature.
 */
export async function sealHmacSecrets(
  deps: AppDeps,
  box: SecretBox,
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
): Promise<void> {
  const { sealed, otherKey } = await sealStoredHmacSecrets(deps.store.db, box);
  if (sealed > 0) log.info({ projects: sealed }, 'HMAC secrets stored in clear are now sealed');
  if (otherKey > 0) {
    log.error(
      { projects: otherKey, keyId: box.keyId },
      'HMAC secrets sealed with another key: this node cannot verify identities for those projects; every node must use the same ANSWERDESK_SECRET_KEY',
    );
  }
}

/**
 * Where this process can call itself: the loopback address when it listens on every interface or on
 * loopback, else the address it listens on.
 */
export function selfOrigin(address: { address: string; port: number }): string {
  const any = ['0.0.0.0', '::', '127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(address.address);
  const host = any ? '127.0.0.1' : address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Starts the HTTP server and wires graceful shutdown on SIGINT/SIGTERM. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const deps = await openDeps(config);
  const app = await buildApp(deps);
  const box = prepareSecretKey(config, app.log);
  await sealHmacSecrets(deps, box, app.log);
  // First run: no dashboard user yet. A one-time link to create the first owner (see accounts/setup.ts).
  const setupToken = await issueSetupToken(deps.store.db);
  const knowledgeWorker = startKnowledgeWorker(deps, { log: app.log, onJobFinished: (outcome, seconds) => deps.metrics.knowledgeJob(outcome, seconds) });
  if (config.METRICS_PORT !== undefined && config.ANSWERDESK_METRICS_TOKEN) {
    const metricsServer = await serveMetrics(deps.metrics, config.ANSWERDESK_METRICS_TOKEN, config.METRICS_PORT, config.HOST);
    app.addHook('onClose', () => metricsServer.close());
    app.log.info({ port: metricsServer.port }, 'metrics listening');
  }
  const webhookWorker = startWebhookWorker(
    { db: deps.store.db, box: secretBox(config), allowPrivateNetwork: config.ANSWERDESK_ALLOW_PRIVATE_NETWORK, metrics: deps.metrics },
    { log: app.log },
  );
  await app.listen({ port: config.PORT, host: config.HOST });
  // The demo's order look-up is served here; its action may call this origin on that path only.
  const origin = selfOrigin(app.server.address() as { address: string; port: number });
  deps.localEndpoints.allow(origin, DEMO_ORDER_PATH_PATTERN);
  const demo = await ensureDemoProject(deps, origin);
  const base = config.ANSWERDESK_PUBLIC_URL ?? `http://localhost:${(app.server.address() as { port: number }).port}`;
  const setupUrl = setupToken ? `${base.replace(/\/+$/, '')}/dashboard/setup?token=${setupToken}` : null;
  // Logged as well as printed, so it is found where a deployment's logs are read. It is one-time and
  // expires once the first owner exists.
  if (setupUrl) app.log.info({ setupUrl }, 'no dashboard user yet: open the setup link to create the first owner');
  process.stderr.write(startBanner(base, demo, config, setupUrl));
  shutDownOnSignals(app, deps, knowledgeWorker, webhookWorker);
  return app;
}

/** After the answers are stored, how long their responses may take to reach slow clients. */
const RESPONSE_GRACE_MS = 2000;

/**
 * SIGTERM or SIGINT drains the node: it stops listening, turns away requests on open connections
 * (503), puts a crawl in progress and webhook attempts in flight back in the queue, and lets open
 * answers finish and be stored.
 * Answers still running after ANSWERDESK_SHUTDOWN_TIMEOUT_MS are stopped: each ends with an error
 * chunk, is stored as failed and releases its conversation, so nothing stays "busy" after the
 * restart. A second signal (an impatient orchestrator, a repeated Ctrl-C) does not cut the drain
 * short; a third stops the open answers at once in the same way.
 */
function shutDownOnSignals(app: FastifyInstance, deps: AppDeps, knowledgeWorker: KnowledgeWorker, webhookWorker: WebhookWorker): void {
  const answers = app.answers;
  const timeoutMs = deps.config.ANSWERDESK_SHUTDOWN_TIMEOUT_MS;
  let signals = 0;

  const drain = async (signal: string) => {
    app.log.info({ signal, answers: answers.size, timeoutMs }, 'shutting down: finishing open answers');
    const workerStopped = knowledgeWorker.stop();
    // Attempts in flight are cut short and due again at once, for the next node or this one after the restart.
    const webhooksStopped = webhookWorker.stop();
    const closed = app.close();
    const deadline = setTimeout(() => {
      app.log.warn({ answers: answers.size }, 'shutdown deadline reached: stopping open answers');
      answers.abortAll(new AnswerInterruptedError('Shutdown deadline reached'));
    }, timeoutMs);
    await answers.idle();
    clearTimeout(deadline);
    // Every answer is stored; their last bytes may still be on the way to slow readers.
    app.server.closeIdleConnections();
    const grace = setTimeout(() => app.server.closeAllConnections(), RESPONSE_GRACE_MS);
    await closed;
    clearTimeout(grace);
    await workerStopped;
    await webhooksStopped;
    await deps.limiter.close();
    await deps.events.close();
    await deps.store.close();
    // The spans still buffered go to the collector before the process ends.
    await deps.tracing?.shutdown().catch((err: unknown) => app.log.warn({ err }, 'could not send the last traces'));
    app.log.info('shut down');
    // Logs are written asynchronously: let the last lines reach stdout before exiting.
    await new Promise<void>((resolve) => (app.log as Logger).flush(() => resolve()));
    process.exit(0);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      void drain(signal).catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        (app.log as Logger).flush(() => process.exit(1));
      });
    } else if (signals === 2) {
      app.log.warn({ signal, answers: answers.size }, 'already shutting down; a third signal stops open answers now');
    } else {
      app.log.warn({ signal, answers: answers.size }, 'stopping open answers now');
      answers.abortAll(new AnswerInterruptedError('Stopped by signal'));
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/**
 * What a person starting the server needs, on standard error, so it never mixes with the log
 * lines on standard output (JSON for collectors, readable lines on a terminal). On the first start
 * it holds the demo project's keys: printed once, never logged.
 */
export function startBanner(
  base: string,
  demo: DemoProject | null,
  config: Pick<Config, 'ANSWERDESK_ADMIN_TOKEN'>,
  setupUrl: string | null = null,
): string {
  const api = `${base}/api/v1`;
  const lines = ['', `AnswerDesk is running at ${base}`, `  API          ${api}  (reference: ${base}/docs)`];
  if (setupUrl) {
    lines.push('', 'No dashboard user yet. Create the first owner (this link works once):', `  setup link   ${setupUrl}`);
  }
  if (demo) {
    lines.push(
      '',
      'Demo project created. Its keys are shown only now; keep them:',
      `  project id   ${demo.projectId}`,
      `  public key   ${demo.publicKey}`,
      `  secret key   ${demo.secretKey}`,
      `  HMAC secret  ${demo.hmacSecret}`,
      `  demo page    ${base}/demo?key=${demo.publicKey}`,
      '',
      'Try it:',
      `  export API=${api} KEY=${demo.publicKey} SECRET=${demo.secretKey} PROJECT=${demo.projectId} HMAC_SECRET=${demo.hmacSecret}`,
      '  curl -s -X POST $API/chat/conversations -H "x-api-key: $KEY"',
      '  curl -s $API/admin/projects/$PROJECT -H "authorization: Bearer $SECRET"   # admin API, this project',
    );
  }
  lines.push(
    '',
    config.ANSWERDESK_ADMIN_TOKEN
      ? `Admin API    ${api}/admin with "authorization: Bearer $ANSWERDESK_ADMIN_TOKEN" (every project), or a project's secret key`
      : `Admin API    ${api}/admin with a project's secret key; set ANSWERDESK_ADMIN_TOKEN (16+ characters) for every project`,
    'CLI          npx answerdesk --help   (projects, keys, knowledge, actions, skills, conversations, analytics)',
    '',
  );
  return `${lines.join('\n')}\n`;
}
