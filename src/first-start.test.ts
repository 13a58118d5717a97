import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from '../test/helper.js';
import { startServerProcess } from '../test/server-process.js';
import { waitFor } from '../test/wait.js';
import { base62 } from './lib/ids.js';
import { signUserId } from './lib/keys.js';
import { ensureDemoProject } from './server.js';
import { openStore, type Store } from './store/index.js';

/** The value printed after `label` in the start banner. */
const field = (banner: string, label: string) => new RegExp(`^ {2}${label}\\s+(\\S+)$`, 'm').exec(banner)?.[1];

// A fresh database, as after `git clone && npm install && npm start`; each start compiles TypeScript.
describe.each(dialects)('the first start of a new install on $name', { timeout: 180_000 }, (dialect) => {
  let dir: string;
  let databaseUrl: string;
  let drop = async () => {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-first-'));
    if (dialect.name === 'sqlite') {
      databaseUrl = `sqlite:${join(dir, 'data', 'answerdesk.db')}`;
      return;
    }
    // An empty schema of its own: the server creates every table itself.
    const schema = `t_first_${base62(10).toLowerCase()}`;
    const client = new pg.Client({ connectionString: dialect.url });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    databaseUrl = `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    drop = async () => {
      const c = new pg.Client({ connectionString: dialect.url });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    };
  });
  afterAll(async () => {
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints a banner on stderr with working keys, the admin API and the CLI; stdout holds only JSON log lines', async () => {
    const server = await startServerProcess({ DATABASE_URL: databaseUrl, ANSWERDESK_DEMO: 'true', ANSWERDESK_ADMIN_TOKEN: '' });
    try {
      await waitFor(() => server.output().stderr.includes('CLI          npx answerdesk --help'), 30_000, 'start banner');
      const banner = server.output().stderr;
      expect(banner).toContain(`AnswerDesk is running at ${server.base.replace('127.0.0.1', 'localhost')}`);
      const publicKey = field(banner, 'public key')!;
      const secretKey = field(banner, 'secret key')!;
      const projectId = field(banner, 'project id')!;
      expect(publicKey).toMatch(/^ad_pk_/);
      expect(banner).toContain(`export API=${server.base.replace('127.0.0.1', 'localhost')}/api/v1 KEY=${publicKey} SECRET=${secretKey} PROJECT=${projectId} HMAC_SECRET=${field(banner, 'HMAC secret')}`);
      expect(banner).toMatch(/^Admin API {4}\S+\/api\/v1\/admin with a project's secret key; set ANSWERDESK_ADMIN_TOKEN/m);
      expect(banner).toMatch(/^CLI {10}npx answerdesk --help/m);

      // The keys printed work: the public key on the runtime API, the secret key on the admin API.
      const conv = await fetch(`${server.base}/api/v1/chat/conversations`, { method: 'POST', headers: { 'x-api-key': publicKey } });
      expect(conv.status).toBe(201);
      const admin = await fetch(`${server.base}/api/v1/admin/projects/${projectId}`, { headers: { authorization: `Bearer ${secretKey}` } });
      expect(admin.status).toBe(200);
      // The HMAC secret printed verifies end users, and is stored only sealed.
      const hmacSecret = field(banner, 'HMAC secret')!;
      expect(hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
      const verified = await fetch(`${server.base}/api/v1/identity/verify`, {
        method: 'POST',
        headers: { 'x-api-key': publicKey, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'first-user', hmac: signUserId(hmacSecret, 'first-user') }),
      });
      expect(await verified.json()).toEqual({ verified: true });
      const store = await openStore(databaseUrl);
      try {
        const row = await store.db.selectFrom('projects').select('hmac_secret').where('id', '=', projectId).executeTakeFirstOrThrow();
        expect(row.hmac_secret).not.toContain('ad_hs_');
      } finally {
        await store.close();
      }

      const { stdout } = server.output();
      const lines = stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(stdout).not.toContain(secretKey);
      expect(stdout).not.toContain(hmacSecret);

      // No dashboard user yet: a one-time setup link, in the banner and in one log line, creates the first owner.
      const setupLink = field(banner, 'setup link')!;
      expect(setupLink).toMatch(/\/dashboard\/setup\?token=[0-9A-Za-z]{43}$/);
      expect(lines.map((line) => JSON.parse(line) as { setupUrl?: string }).some((l) => l.setupUrl === setupLink)).toBe(true);
      const token = new URL(setupLink).searchParams.get('token');
      const setup = await fetch(`${server.base}/api/v1/auth/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, email: 'owner@example.com', name: 'Owner', password: 'first owner password' }),
      });
      expect(setup.status).toBe(201);
      const cookie = setup.headers.get('set-cookie')!.split(';')[0];
      const projects = await fetch(`${server.base}/api/v1/admin/projects`, { headers: { cookie } });
      expect((await projects.json()).projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    // The next start: no keys again; LOG_FORMAT=pretty (what a terminal gets) writes readable lines.
    const again = await startServerProcess({ DATABASE_URL: databaseUrl, ANSWERDESK_DEMO: 'true', LOG_FORMAT: 'pretty' });
    try {
      await waitFor(() => again.output().stderr.includes('CLI          npx answerdesk --help'), 30_000, 'start banner');
      const { stdout, stderr } = again.output();
      expect(stderr).not.toContain('public key');
      expect(stderr).not.toContain('setup link');
      expect(stderr).toMatch(/^Admin API {4}\S+ with "authorization: Bearer \$ANSWERDESK_ADMIN_TOKEN" \(every project\)/m);
      expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+/m);
      expect(stdout.split('\n').filter(Boolean).some((line) => line.startsWith('{'))).toBe(false);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

// Nodes of one deployment started together (a rollout, `docker compose up --scale`) on a database
// that has no project yet: each finds it empty, and one demo project must come out of it.
describe.each(dialects)('two nodes starting at once on an empty $name database', { timeout: 60_000 }, (dialect) => {
  /** Two nodes over one fresh database: two pools on one schema on PostgreSQL, one connection on SQLite. */
  async function twoNodes(): Promise<{ nodes: TestApp[]; close(): Promise<void> }> {
    const env = { ANSWERDESK_DEMO: 'true' };
    const schema = `t_nodes_${base62(10).toLowerCase()}`;
    const stores: Store[] = [];
    if (dialect.name === 'postgres') {
      stores.push(await openStore(dialect.url, { schema }));
      stores.push(await openStore(dialect.url, { schema }));
    } else {
      stores.push(await openStore(dialect.url));
    }
    const nodes = [await createTestApp({ dialect, store: stores[0], env }), await createTestApp({ dialect, store: stores.at(-1), env })];
    return {
      nodes,
      async close() {
        for (const node of nodes) await node.close();
        for (const store of stores) await store.close();
        if (dialect.name !== 'postgres') return;
        const client = new pg.Client({ connectionString: dialect.url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      },
    };
  }

  it('create exactly one demo project, which only one of them prints', async () => {
    for (let round = 0; round < 5; round++) {
      const { nodes, close } = await twoNodes();
      try {
        const demos = await Promise.all(nodes.map((node) => ensureDemoProject(node.deps, 'http://127.0.0.1:1')));
        const db = nodes[0]!.deps.store.db;
        const projects = await db.selectFrom('projects').select('id').execute();
        expect(projects, `round ${round}`).toHaveLength(1);
        expect(demos.filter((d) => d !== null).map((d) => d!.projectId)).toEqual([projects[0]!.id]);
        // Everything the demo holds was made once.
        expect(await db.selectFrom('actions').select('name').execute()).toEqual([{ name: 'track_order' }]);
        expect(await db.selectFrom('skills').select('id').execute()).toHaveLength(2);
        expect(await db.selectFrom('api_keys').select('id').execute()).toHaveLength(2);
        // A later start leaves the database alone.
        expect(await ensureDemoProject(nodes[1]!.deps, 'http://127.0.0.1:1')).toBeNull();
      } finally {
        await close();
      }
    }
  });
});
