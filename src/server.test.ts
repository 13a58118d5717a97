import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../test/fakes/openai-compatible.js';
import { adminAuth, auth, createTestApp, dialects, testSecretBox } from '../test/helper.js';
import { SERVER_SECRET_KEY, serverDatabase, startServerProcess, type ServerProcess } from '../test/server-process.js';
import { parseAnswer, streamedText } from '../test/ui-stream.js';
import { waitFor } from '../test/wait.js';
import { SAFE_ERRORS } from './agent/answer.js';
import { base62 } from './lib/ids.js';
import { createProject, type CreatedProject } from './projects/projects.js';
import type { Store } from './store/index.js';

// Each server is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('the server process on $name', { timeout: 120_000 }, (dialect) => {
  const applicationName = `answerdesk_srv_${base62(10).toLowerCase()}`;
  let dir: string;
  let fake: FakeOpenAICompatible;
  let db: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;
  let p: CreatedProject;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-server-'));
    fake = await startFakeOpenAICompatible();
    db = await serverDatabase(dialect, dir, 't_srv', applicationName);
    store = db.store;
    env = { DATABASE_URL: db.url, OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' };
  });
  // Each test its own project (the servers of this file share one database).
  beforeEach(async () => {
    p = await createProject(store.db, testSecretBox(SERVER_SECRET_KEY), { name: 'Shop', settings: { model: 'openai-compatible:fake' } });
  });
  afterAll(async () => {
    fake.resume();
    await fake.close();
    await store.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function conversation(server: ServerProcess): Promise<string> {
    const res = await fetch(`${server.base}/api/v1/chat/conversations`, { method: 'POST', headers: auth(p.publicKey) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { conversationId: string }).conversationId;
  }
  /** Sends and reads the whole answer stream, as a browser would. */
  const send = async (server: ServerProcess, conversationId: string, content: string) => {
    const res = await fetch(`${server.base}/api/v1/chat/messages`, {
      method: 'POST',
      headers: { ...auth(p.publicKey), 'content-type': 'application/json' },
      body: JSON.stringify({ conversationId, messages: [{ role: 'user', content }] }),
    });
    return { status: res.status, ...(await parseAnswer(await res.text())) };
  };
  const rows = (ids: string[]) =>
    store.db.selectFrom('messages').select(['conversation_id', 'role', 'content', 'status']).where('conversation_id', 'in', ids).orderBy('conversation_id').orderBy('seq').execute();
  const leases = (ids: string[]) => store.db.selectFrom('answer_leases').selectAll().where('conversation_id', 'in', ids).execute();

  it('writes one access line per request without further traffic, and the shutdown lines before it exits', async () => {
    const server = await startServerProcess(env);
    try {
      const res = await fetch(`${server.base}/api/v1/widget/config`, { headers: auth(p.publicKey) });
      expect(res.status).toBe(200);
      const requestId = res.headers.get('x-request-id');
      // A lone line on an idle server arrives: nothing holds it back for more.
      await waitFor(() => server.logs().find((l) => l.msg === 'request completed' && l.reqId === requestId), 20_000, 'access line');
      const line = server.logs().find((l) => l.reqId === requestId)!;
      expect(line).toMatchObject({ level: 30, method: 'GET', url: '/api/v1/widget/config', statusCode: 200 });
      expect(typeof line.responseTime).toBe('number');
      expect(server.logs().filter((l) => l.reqId === requestId)).toHaveLength(1);
      expect(await server.stop()).toBe(0);
      // The exit can be seen before the last bytes of the pipe are read.
      await waitFor(() => server.logs().some((l) => l.msg === 'shut down'), 10_000, 'shutdown line');
      const messages = server.logs().map((l) => l.msg);
      expect(messages.lastIndexOf('shut down')).toBeGreaterThan(messages.indexOf('request completed'));
      expect(messages).toContain('shutting down: finishing open answers');
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('drains on SIGTERM: a second signal does not cut it short, every open answer is stored, the exit is clean', async () => {
    const server = await startServerProcess(env);
    const ids = await Promise.all([1, 2, 3, 4, 5].map(() => conversation(server)));
    fake.setFallback(() => ({ text: ['Part one. ', 'Part two.'], holdAfterChunks: 1 }));
    const answers = ids.map((id) => send(server, id, 'Tell me everything.'));
    await waitFor(() => fake.heldResponses() === 5);

    server.child.kill('SIGTERM');
    await server.waitForLog('shutting down: finishing open answers');
    server.child.kill('SIGTERM');
    await server.waitForLog('already shutting down; a third signal stops open answers now');
    expect(server.child.exitCode).toBeNull();
    // Still draining: new connections are no longer accepted.
    await expect(fetch(`${server.base}/health`)).rejects.toThrow();

    fake.resume();
    for (const answer of await Promise.all(answers)) {
      expect(answer.status).toBe(200);
      expect(streamedText(answer.chunks)).toBe('Part one. Part two.');
    }
    expect(await server.stop()).toBe(0);
    const stored = await rows(ids);
    expect(stored.filter((r) => r.role === 'assistant').map((r) => [r.content, r.status])).toEqual(ids.map(() => ['Part one. Part two.', 'complete']));
    expect(await leases(ids)).toEqual([]);
  });

  it.each([
    ['the shutdown deadline passes', { ANSWERDESK_SHUTDOWN_TIMEOUT_MS: '300' }, 1],
    ['a third signal arrives', { ANSWERDESK_SHUTDOWN_TIMEOUT_MS: '600000' }, 3],
  ] as const)('stops open answers when %s: stored as failed, conversations free for the next send', async (_name, extra, signals) => {
    const server = await startServerProcess({ ...env, ...extra });
    const ids = await Promise.all([1, 2].map(() => conversation(server)));
    fake.setFallback(() => ({ text: ['Part one. ', 'Part two.'], holdAfterChunks: 1 }));
    const answers = ids.map((id) => send(server, id, 'Tell me everything.'));
    await waitFor(() => fake.heldResponses() === 2);

    server.child.kill('SIGTERM');
    await server.waitForLog('shutting down: finishing open answers');
    if (signals === 3) {
      server.child.kill('SIGTERM');
      await server.waitForLog('already shutting down; a third signal stops open answers now');
      server.child.kill('SIGTERM');
    }
    expect(await server.stop()).toBe(0);
    for (const answer of await Promise.all(answers)) {
      expect(streamedText(answer.chunks)).toBe('Part one. ');
      expect(answer.chunks.filter((c) => c.type === 'error')).toEqual([{ type: 'error', errorText: SAFE_ERRORS.interrupted }]);
    }
    expect((await rows(ids)).filter((r) => r.role === 'assistant').map((r) => [r.content, r.status])).toEqual(ids.map(() => ['Part one.', 'error']));
    expect(await leases(ids)).toEqual([]);
    fake.resume();

    // The next node accepts the next send at once: nothing is left "busy".
    const next = await createTestApp({ dialect, store, env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl } });
    try {
      fake.setFallback(() => ({ text: 'Here again.' }));
      const res = await next.app.inject({
        method: 'POST',
        url: '/api/v1/chat/messages',
        headers: auth(p.publicKey),
        payload: { conversationId: ids[0], messages: [{ role: 'user', content: 'Are you back?' }] },
      });
      expect(res.statusCode).toBe(200);
      expect(streamedText((await parseAnswer(res.body)).chunks)).toBe('Here again.');
    } finally {
      await next.close();
    }
  });

  it('stops a crawl in progress at shutdown, and the restarted server crawls the source to the end', async () => {
    const site = await startSite(25);
    let server = await startServerProcess(env);
    try {
      const created = await fetch(`${server.base}/api/v1/admin/projects/${p.project.id}/knowledge`, {
        method: 'POST',
        headers: { ...adminAuth(), 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'url', url: `${site.base}/`, maxDepth: 1, title: 'Help center' }),
      });
      expect(created.status).toBe(201);
      const sourceId = ((await created.json()) as { source: { id: string } }).source.id;
      // The crawl is under way: the start page is read and the first article hangs.
      await waitFor(() => site.held() > 0);

      expect(await server.stop('SIGTERM', 20_000)).toBe(0);
      const job = await store.db.selectFrom('knowledge_jobs').selectAll().where('source_id', '=', sourceId).executeTakeFirstOrThrow();
      // Given back: queued, no owner, the attempt not counted; its last lease time marks it as run before.
      expect(job).toMatchObject({ status: 'queued', attempts: 0, lease_owner: null, lease_until: expect.any(String) });
      const source = await store.db.selectFrom('knowledge_sources').selectAll().where('id', '=', sourceId).executeTakeFirstOrThrow();
      expect(source.status).toBe('pending');

      site.answerAll();
      server = await startServerProcess(env);
      const ready = await waitFor(
        async () => {
          const row = await store.db.selectFrom('knowledge_sources').selectAll().where('id', '=', sourceId).executeTakeFirstOrThrow();
          return row.status === 'ready' || row.status === 'failed' ? row : null;
        },
        60_000,
        'the source to be crawled',
      );
      expect(ready).toMatchObject({ status: 'ready', pages_done: 26, error: null });
      expect(await store.db.selectFrom('knowledge_jobs').select(['status', 'attempts']).where('source_id', '=', sourceId).executeTakeFirst()).toEqual({
        status: 'done',
        attempts: 1,
      });
    } finally {
      await server.stop();
      await site.close();
    }
  });

  // Only PostgreSQL has connections to end; defined only there, so the SQLite run skips nothing.
  if (dialect.name === 'postgres') it(
    'stays up when PostgreSQL ends its connections mid-answer (pg_terminate_backend), stores the answer and serves on',
    async () => {
      const server = await startServerProcess(env);
      try {
        const id = await conversation(server);
        fake.setFallback(() => ({ text: ['Parcels ', 'ship ', 'in ', 'two ', 'days.'], holdAfterChunks: 2 }));
        const answer = send(server, id, 'When does my parcel ship?');
        await waitFor(() => fake.heldResponses() === 1);
        const admin = new pg.Client({ connectionString: dialect.url });
        await admin.connect();
        const { rows: killed } = await admin.query<{ n: number }>(
          'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1',
          [applicationName],
        );
        await admin.end();
        expect(killed[0]!.n).toBeGreaterThan(0);
        await server.waitForLog('database connection lost; the next query opens a new one');

        fake.resume();
        expect(streamedText((await answer).chunks)).toBe('Parcels ship in two days.');
        expect((await rows([id])).map((r) => [r.role, r.content, r.status])).toEqual([
          ['user', 'When does my parcel ship?', 'complete'],
          ['assistant', 'Parcels ship in two days.', 'complete'],
        ]);
        expect(server.child.exitCode).toBeNull();
        expect((await fetch(`${server.base}/ready`)).status).toBe(200);
        fake.setFallback(() => ({ text: 'Still here.' }));
        expect(streamedText((await send(server, id, 'Still there?')).chunks)).toBe('Still here.');
      } finally {
        expect(await server.stop()).toBe(0);
      }
    },
  );
});

/** A help site of `pages` articles linked from its start page; articles hang until `answerAll()`. */
async function startSite(pages: number) {
  const held = new Set<ServerResponse>();
  let holding = true;
  const server: Server = createServer((req, res) => {
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><body>${body}</body></html>`);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (req.url === '/') {
      const links = Array.from({ length: pages }, (_, i) => `<li><a href="/articles/${i + 1}">Article ${i + 1}</a></li>`).join('');
      return void html(`<h1>Help center</h1><p>Answers to common questions about orders and parcels.</p><ul>${links}</ul>`);
    }
    const n = /^\/articles\/(\d+)$/.exec(req.url ?? '')?.[1];
    if (!n) return void res.writeHead(404).end();
    if (holding) return void held.add(res);
    html(`<h1>Article ${n}</h1><p>Article ${n} explains topic number ${n} in enough words to be worth a chunk of its own.</p>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held.size,
    answerAll() {
      holding = false;
      for (const res of held) res.destroy();
      held.clear();
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
