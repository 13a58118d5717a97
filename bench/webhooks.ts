import { buildApp } from '../src/app.js';
import { secretBox } from '../src/lib/secret-box.js';
import { createProject } from '../src/projects/projects.js';
import { webhookDeps } from '../src/api/webhooks/service.js';
import { createEndpoint } from '../src/webhooks/endpoints.js';
import { openBench } from './store.js';

/**
 * Webhook metrics benchmark: what a `GET /metrics` scrape costs the node, measured as the server
 * process's CPU time per scrape (process.cpuUsage, which survives a loaded machine better than wall
 * time), with no webhook deliveries stored and then with BENCH_WEBHOOK_DELIVERIES (default 100,000;
 * one in ten unsettled) in the log, where `answerdesk_webhook_deliveries_pending` counts the
 * unsettled ones on the status index. On SQLite, and on PostgreSQL when BENCH_DATABASE_URL (or
 * TEST_DATABASE_URL) names a server (its own CPU is not in the figure; the wall time shows it).
 */
const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 100_000);
const SCRAPES = 200;
const TOKEN = 'bench-metrics-token-0123456789';

async function scrapeCost(kind: 'sqlite' | 'postgres', url: string) {
  const bench = await openBench(kind, url, { ANSWERDESK_METRICS_TOKEN: TOKEN, ANSWERDESK_SECRET_KEY: 'bench-secret-key-0123456789abcdef' });
  const app = await buildApp(bench.deps);
  try {
    const db = bench.deps.store.db;
    const measure = async () => {
      const scrape = async () => {
        const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
        if (res.statusCode !== 200) throw new Error(`GET /metrics answered ${res.statusCode}`);
        return res.body;
      };
      for (let i = 0; i < 20; i++) await scrape();
      const cpu = process.cpuUsage();
      const started = performance.now();
      let body = '';
      for (let i = 0; i < SCRAPES; i++) body = await scrape();
      const used = process.cpuUsage(cpu);
      const pending = /^answerdesk_webhook_deliveries_pending (\S+)$/m.exec(body)?.[1];
      return { cpuMs: (used.user + used.system) / 1000 / SCRAPES, wallMs: (performance.now() - started) / SCRAPES, pending };
    };
    const empty = await measure();

    const { project } = await createProject(db, secretBox(bench.deps.config), { name: 'Webhook bench' });
    const w = webhookDeps(bench.deps);
    const { row } = await createEndpoint(db, w.box, project.id, { url: 'https://hooks.example.com/bench' }, w);
    const at = new Date().toISOString();
    await db.insertInto('webhook_events').values({ id: 'evt_bench', project_id: project.id, type: 'message.created', payload: '{}', created_at: at }).execute();
    for (let i = 0; i < DELIVERIES; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, DELIVERIES - i) }, (_, j) => {
        const unsettled = (i + j) % 10 === 0;
        return {
          id: `whd_bench${i + j}`,
          project_id: project.id,
          endpoint_id: row.id,
          event_id: 'evt_bench',
          status: unsettled ? ('pending' as const) : ('delivered' as const),
          attempts: 1,
          next_attempt_at: unsettled ? at : null,
          lease_owner: null,
          lease_until: null,
          last_attempt_at: at,
          response_status: unsettled ? 500 : 204,
          duration_ms: 5,
          error: unsettled ? 'HTTP 500' : null,
          delivered_at: unsettled ? null : at,
          created_at: at,
          updated_at: at,
        };
      });
      await db.insertInto('webhook_deliveries').values(rows).execute();
    }
    const full = await measure();
    return { empty, full };
  } finally {
    await app.close();
    await bench.close();
  }
}

export async function run(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const targets: Array<['sqlite' | 'postgres', string]> = [['sqlite', ''], ...(pgUrl ? [['postgres', pgUrl] as ['postgres', string]] : [])];
  if (!pgUrl) console.log('PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to include it.');
  console.log(`GET /metrics, ${SCRAPES} scrapes each: server CPU and wall time per scrape, without deliveries and with ${DELIVERIES.toLocaleString('en')} (10 % unsettled)`);
  console.log('| database | deliveries | pending gauge | CPU ms/scrape | wall ms/scrape |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [kind, url] of targets) {
    const { empty, full } = await scrapeCost(kind, url);
    console.log(`| ${kind} | 0 | ${empty.pending} | ${empty.cpuMs.toFixed(2)} | ${empty.wallMs.toFixed(2)} |`);
    console.log(`| ${kind} | ${DELIVERIES.toLocaleString('en')} | ${full.pending} | ${full.cpuMs.toFixed(2)} | ${full.wallMs.toFixed(2)} |`);
  }
}
