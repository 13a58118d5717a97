import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base62 } from '../src/lib/ids.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from './fakes/openai-compatible.js';
import { ADMIN_TOKEN } from './helper.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { parseAnswer } from './ui-stream.js';
import { waitFor } from './wait.js';

/**
 * Scale-out, as deployed: separate `answerdesk serve` processes on one PostgreSQL schema and one
 * Redis, each addressed directly (as a load balancer would). Needs TEST_DATABASE_URL and
 * TEST_REDIS_URL; under CI=true the global setup fails the run when either is missing.
 */
const { TEST_DATABASE_URL, TEST_REDIS_URL } = process.env;

/** Per-node key/settings cache TTL for this test: short, so convergence is quick to see. */
const CACHE_TTL_MS = 1500;
/** ANSWERDESK_MODEL_TIMEOUT_MS; the answer lease is this plus the 30 s margin of api/messages/service.ts. */
const MODEL_TIMEOUT_MS = 2000;
const ANSWER_LEASE_MS = MODEL_TIMEOUT_MS + 30_000;
/** The knowledge worker's lease (src/knowledge/jobs.ts). */
const JOB_LEASE_MS = 30_000;

/**
 * A website for a URL knowledge source: robots.txt is missing, and the first GET of /guide hangs
 * (the node crawling it is killed meanwhile) while later ones answer at once.
 */
async function startSite(): Promise<{ base: string; pageRequests: () => number; close(): Promise<void> }> {
  let pageRequests = 0;
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    if (req.url === '/guide') {
      pageRequests++;
      if (pageRequests === 1) {
        hanging.add(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><head><title>Returns guide</title></head><body><main><h1>Returns</h1><p>Parcels can be returned within 30 days of delivery with the prepaid label.</p></main></body></html>');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pageRequests: () => pageRequests,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!TEST_DATABASE_URL || !TEST_REDIS_URL)('several server processes on one PostgreSQL and one Redis', () => {
  const schema = `mn_${base62(12).toLowerCase()}`;
  let admin: pg.Client;
  let fake: FakeOpenAICompatible;
  let site: Awaited<ReturnType<typeof startSite>>;
  let nodes: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;

  const json = (base: string, path: string, init: { method?: string; key?: string; body?: unknown } = {}) =>
    fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.key ?? ADMIN_TOKEN}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  const newProject = async (settings: Record<string, unknown> = {}) => {
    const res = await json(a.base, '/api/v1/admin/projects', {
      method: 'POST',
      body: { name: 'Multi-node', settings: { model: 'openai-compatible:fake', rateLimits: { chat: 1000, session: 1000, general: 1000 }, ...settings } },
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { project: { id: string }; publicKey: string; secretKey: string };
  };
  const newConversation = async (base: string, key: string) => {
    const res = await json(base, '/api/v1/chat/conversations', { method: 'POST', key });
    expect(res.status).toBe(201);
    return ((await res.json()) as { conversationId: string }).conversationId;
  };
  const send = (base: string, key: string, conversationId: string, content: string) =>
    json(base, '/api/v1/chat/messages', { method: 'POST', key, body: { conversationId, messages: [{ role: 'user', content }] } });
  /** Reads an answer stream until its first text, leaving the rest unread. */
  const readUntilText = async (res: Response) => {
    const reader = res.body!.getReader();
    let text = '';
    await waitFor(async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before any text: ${text}`);
      text += new TextDecoder().decode(value);
      return text.includes('"text-delta"');
    }, 20_000, 'first text of the answer');
    return reader;
  };
  const history = async (base: string, key: string, conversationId: string) => {
    const res = await json(base, `/api/v1/chat/conversations/${conversationId}`, { key });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messages: Array<{ role: string; content: string }> }).messages;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    fake = await startFakeOpenAICompatible();
    site = await startSite();
    const url = new URL(TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      DATABASE_URL: url.toString(),
      REDIS_URL: TEST_REDIS_URL!,
      OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
      ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true',
      ANSWERDESK_CACHE_TTL_MS: String(CACHE_TTL_MS),
      ANSWERDESK_MODEL_TIMEOUT_MS: String(MODEL_TIMEOUT_MS),
      LOG_FORMAT: 'json',
    };
    // Started together, as after a deployment: both run the migrations against the same empty schema.
    nodes = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    [a, b] = nodes as [ServerProcess, ServerProcess];
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop('SIGKILL').catch(() => undefined)));
    fake?.release();
    await fake?.close();
    await site?.close();
    if (admin) {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  }, 60_000);

  it('reports both dependencies as ready on every node', async () => {
    for (const node of [a, b]) {
      const res = await fetch(`${node.base}/ready`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', database: 'ok', redis: 'ok' });
    }
  });

  it('shares rate-limit counts: a project’s budget is spent across nodes', async () => {
    const p = await newProject({ rateLimits: { chat: 1000, session: 1000, general: 4 } });
    const seen: Array<[number, string | null]> = [];
    for (const node of [a, b, a, b, a, b]) {
      const res = await json(node.base, '/api/v1/widget/config', { key: p.publicKey });
      seen.push([res.status, res.headers.get('x-ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
      [429, '0'],
    ]);
  });

  it('continues a conversation started on one node on the other', async () => {
    const p = await newProject();
    const conversationId = await newConversation(a.base, p.publicKey);
    fake.enqueue({ text: 'Hi, how can I help?' }, { text: 'Your parcel ships today.' });
    const first = await send(a.base, p.publicKey, conversationId, 'Hello');
    expect(first.status).toBe(200);
    await first.text();
    const sentBefore = fake.requests.length;
    const second = await send(b.base, p.publicKey, conversationId, 'When does my parcel ship?');
    expect(second.status).toBe(200);
    expect((await parseAnswer(await second.text())).message?.parts.some((part) => part.type === 'text' && part.text.includes('ships today'))).toBe(true);
    // Node B built its prompt from the history node A stored.
    const prompt = JSON.stringify(fake.requests[sentBefore]!.body.messages);
    expect(prompt).toContain('Hi, how can I help?');
    expect((await history(a.base, p.publicKey, conversationId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hello'],
      ['assistant', 'Hi, how can I help?'],
      ['user', 'When does my parcel ship?'],
      ['assistant', 'Your parcel ships today.'],
    ]);
  });

  it('holds the busy rule across nodes: a second send on the other node gets 409 while the first streams', async () => {
    const p = await newProject();
    const conversationId = await newConversation(a.base, p.publicKey);
    fake.enqueue({ text: ['Let me ', 'check that ', 'for you.'], holdAfterChunks: 1 });
    const streaming = await send(a.base, p.publicKey, conversationId, 'Is the shop open on Sunday?');
    expect(streaming.status).toBe(200);
    const reader = await readUntilText(streaming);
    const busy = await send(b.base, p.publicKey, conversationId, 'Hello?');
    expect(busy.status).toBe(409);
    expect(await busy.json()).toEqual({ error: 'Conversation is busy' });
    fake.resume();
    while (!(await reader.read()).done);
    // Released when the answer is stored: the other node takes the next send at once.
    const next = await send(b.base, p.publicKey, conversationId, 'Thanks');
    expect(next.status).toBe(200);
    await next.text();
  });

  it('converges the key and widget caches within their TTL after an admin write on the other node', async () => {
    const p = await newProject({ widget: { primaryColor: '#111111' } });
    const extra = await json(a.base, `/api/v1/admin/projects/${p.project.id}/keys`, { method: 'POST', body: { kind: 'public' } });
    expect(extra.status).toBe(201);
    const { key, secret } = (await extra.json()) as { key: { id: string }; secret: string };
    // Node B reads (and caches) the key and the widget configuration.
    const config = async (k: string) => json(b.base, '/api/v1/widget/config', { key: k });
    expect(((await (await config(secret)).json()) as { primaryColor: string }).primaryColor).toBe('#111111');

    const changed = await json(a.base, `/api/v1/admin/projects/${p.project.id}`, { method: 'PATCH', body: { settings: { widget: { primaryColor: '#222222' } } } });
    expect(changed.status).toBe(200);
    const revoked = await json(a.base, `/api/v1/admin/projects/${p.project.id}/keys/${key.id}`, { method: 'DELETE' });
    expect(revoked.status).toBeLessThan(300);
    const written = Date.now();
    // Bounded by the TTL plus the time of one request on a busy machine.
    await waitFor(async () => ((await (await config(p.publicKey)).json()) as { primaryColor: string }).primaryColor === '#222222', CACHE_TTL_MS + 3000, 'new widget colour on node B');
    await waitFor(async () => (await config(secret)).status === 401, CACHE_TTL_MS + 3000, 'revoked key refused on node B');
    expect(Date.now() - written).toBeLessThan(CACHE_TTL_MS + 3000);
  });

  it('survives SIGKILL of a node mid-job and mid-answer: the job is taken over once, the conversation is usable after the lease', async () => {
    const p = await newProject();
    // A URL source whose page hangs on the first fetch: the job stays in the hands of one node.
    const created = await json(a.base, `/api/v1/admin/projects/${p.project.id}/knowledge`, { method: 'POST', body: { type: 'url', url: `${site.base}/guide` } });
    expect(created.status).toBe(201);
    const sourceId = ((await created.json()) as { source: { id: string } }).source.id;
    const claims = (node: ServerProcess) => node.logs().filter((l) => l.msg === 'knowledge job claimed' && l.sourceId === sourceId);
    await waitFor(() => site.pageRequests() === 1 && claims(a).length + claims(b).length === 1, 20_000, 'one node crawling the page');
    const [victim, survivor] = claims(a).length === 1 ? [a, b] : [b, a];
    expect(claims(survivor)).toEqual([]);
    const job = await admin.query(`select status, lease_owner, attempts from ${schema}.knowledge_jobs where source_id = $1`, [sourceId]);
    expect(job.rows).toEqual([{ status: 'running', lease_owner: claims(victim)[0]!.worker, attempts: 1 }]);

    // The same node is mid-answer: the model has sent its first words and holds the rest.
    const conversationId = await newConversation(survivor.base, p.publicKey);
    fake.enqueue({ text: ['Returns are ', 'free within 30 days.'], holdAfterChunks: 1 });
    const streaming = await send(victim.base, p.publicKey, conversationId, 'How do returns work?');
    expect(streaming.status).toBe(200);
    const reader = await readUntilText(streaming);

    const killedAt = Date.now();
    expect(await victim.stop('SIGKILL')).toBe(null);
    await reader.read().catch(() => undefined);
    fake.release();

    // The conversation is busy until the dead node's lease runs out, then the other node answers it.
    fake.setFallback(() => ({ text: 'Returns are free within 30 days of delivery.' }));
    const busy = await send(survivor.base, p.publicKey, conversationId, 'How do returns work?');
    expect(busy.status).toBe(409);
    const answered = await waitFor(
      async () => {
        const res = await send(survivor.base, p.publicKey, conversationId, 'How do returns work?');
        if (res.status === 409) {
          await res.body?.cancel();
          await new Promise((r) => setTimeout(r, 500));
          return null;
        }
        return res;
      },
      ANSWER_LEASE_MS + 10_000,
      'the conversation usable again',
    );
    expect(answered.status).toBe(200);
    await answered.text();
    expect(Date.now() - killedAt).toBeLessThan(ANSWER_LEASE_MS + 10_000);
    // The question asked again is the same question: stored once, now answered.
    expect((await history(survivor.base, p.publicKey, conversationId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'How do returns work?'],
      ['assistant', 'Returns are free within 30 days of delivery.'],
    ]);

    // The dead node's job: taken over by the other node once its lease ran out, and finished.
    const source = await waitFor(
      async () => {
        const res = await json(survivor.base, `/api/v1/admin/projects/${p.project.id}/knowledge/${sourceId}`);
        const body = (await res.json()) as { source: { status: string; chunkCount?: number } };
        return body.source.status === 'ready' ? body.source : null;
      },
      JOB_LEASE_MS + 20_000,
      'the knowledge source ready',
    );
    expect(source.status).toBe('ready');
    expect(claims(survivor)).toHaveLength(1);
    expect(claims(survivor)[0]!.attempt).toBe(2);
    const done = await admin.query(`select status, lease_owner, attempts from ${schema}.knowledge_jobs where source_id = $1`, [sourceId]);
    expect(done.rows).toEqual([{ status: 'done', lease_owner: claims(survivor)[0]!.worker, attempts: 2 }]);
    const search = await json(survivor.base, `/api/v1/admin/projects/${p.project.id}/knowledge/search?q=prepaid%20label`);
    expect(JSON.stringify(await search.json())).toContain('prepaid label');
  }, ANSWER_LEASE_MS + JOB_LEASE_MS + 60_000);
});
