import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../test/fakes/action-endpoint.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { adminAuth, answeredConversation, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { signHs256 } from '../../test/identity.js';
import { multipart, waitForSource } from '../../test/support/knowledge.js';
import { validBodies } from '../../test/support/valid-bodies.js';
import type { Json } from '../../test/support/schema-mutations.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../knowledge/jobs.js';
import type { CreatedProject } from '../projects/projects.js';
import { createUser } from '../accounts/users.js';

const NUL = '\u0000';
const SECRET_KEY = 'test-secret-key-for-actions-0123456789';
/** The first test alone makes hundreds of calls to one project. */
const RELAXED_LIMITS = { chat: 100_000, session: 100_000, general: 100_000 };


/** Every string leaf of a JSON value, by path. */
function stringLeaves(value: Json, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

function withNulAt(value: Json, path: Array<string | number>, char = NUL): Json {
  if (path.length === 0) return `${value as string}${char}x`;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? withNulAt(v, rest, char) : v));
  const obj = value as { [key: string]: Json };
  return { ...obj, [head as string]: withNulAt(obj[head as string]!, rest, char) };
}

/** Whether any string (or key) in a value holds U+0000. */
function holdsNul(value: unknown): boolean {
  let found = false;
  JSON.stringify(value, (key, v: unknown) => {
    if (key.includes(NUL) || (typeof v === 'string' && v.includes(NUL))) found = true;
    return v;
  });
  return found;
}

/**
 * U+0000 is refused in every input on both databases alike (PostgreSQL's text cannot hold it):
 * 400 Validation error naming the field, never a 500; and text that AnswerDesk did not get from a
 * client (model output, action responses, uploaded documents) is stored without it.
 */
describe.each(dialects)('U+0000 on $name', (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let worker: KnowledgeWorker;
  let ep: ActionEndpoint;
  let fake: FakeOpenAICompatible;
  const ids: Record<string, string> = {};
  const logs: string[] = [];

  beforeAll(async () => {
    ep = await startActionEndpoint();
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({
      dialect,
      // Loopback URLs are accepted for actions, sources and webhooks (this machine is the only network
      // a test may reach); what is checked here is U+0000, not the URL rules.
      env: { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true', OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake' },
      logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } },
    });
    worker = startKnowledgeWorker(t.deps, { pollMs: 20 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await ep.close();
    await fake.close();
  });

  /**
   * A project with one of everything (action, skill, key, knowledge source, conversation with an
   * answer), so each route gets a body and path ids that are valid but for the U+0000 put in.
   */
  async function everythingProject(): Promise<void> {
    p = await createProject(t, { model: 'builtin', rateLimits: RELAXED_LIMITS });
    ids.projectId = p.project.id;

    const admin = async (method: InjectOptions['method'], path: string, payload?: unknown) => {
      const res = await t.app.inject({ method, url: `/api/v1/admin/projects/${p.project.id}${path}`, headers: adminAuth(), payload: payload as InjectOptions['payload'] });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json();
    };
    // The action points at a loopback address the network guard refuses: a test run that got
    // through validation would still never leave this machine.
    ids.actionId = (await admin('POST', '/actions', { name: 'lookup', description: 'Look up', url: 'http://127.0.0.1:9/x/{q}', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } })).action.id;
    ids.skillId = (await admin('POST', '/skills', { name: 'Returns', description: 'Return an item', instructions: 'Ask for the order number.' })).skill.id;
    ids.userId = (await createUser(t.deps.store.db, { email: 'member@example.com', name: 'Member', role: 'member', password: 'a long password 1' })).id;
    const invite = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers: adminAuth(), payload: { email: 'later@example.com', role: 'member' } });
    ids.inviteId = invite.json().invite.id;
    ids.keyId = (await admin('POST', '/keys', { kind: 'public', name: 'spare' })).key.id;
    const source = (await admin('POST', '/knowledge', { type: 'text', title: 'Hours', content: 'We are open nine to five on weekdays.' })).source;
    ids.sourceId = (await waitForSource(t.app, p.project.id, source.id)).id;
    // Nothing delivers here (no webhook worker): the endpoint only has to exist.
    ids.webhookId = (await admin('POST', '/webhooks', { url: 'http://localhost:9/hook' })).webhook.id;
    ids.deliveryId = (await admin('POST', `/webhooks/${ids.webhookId}/test`)).delivery.id;

    ({ conversationId: ids.conversationId, messageId: ids.messageId } = await answeredConversation(t, p.publicKey, 'When are you open?'));
  }



  it('answers 400 Validation error for U+0000 in any path parameter, query parameter or body field of every route, and for an unpaired surrogate in any body field', async () => {
    await everythingProject();
    const doc = t.app.swagger() as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: { content: Record<string, unknown> } }>> };
    const bodies = validBodies(ids, p.hmacSecret, 'a long password 1');
    const failures: string[] = [];
    let checked = 0;

    const expectRefused = async (method: string, url: string, field: string, payload?: Json, message = /U\+0000/) => {
      checked++;
      const admin = url.startsWith('/api/v1/admin/');
      const runtime = !admin && url.startsWith('/api/v1/');
      const res = await t.app.inject({
        method: method as InjectOptions['method'],
        url,
        headers: admin ? adminAuth() : runtime ? auth(p.publicKey) : {},
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
      const body = res.headers['content-type']?.toString().includes('json') ? res.json() : res.body;
      const identity = url.startsWith('/api/v1/identity/');
      const ok =
        res.statusCode === 400 &&
        body.error === 'Validation error' &&
        (identity ? body.verified === false : body.details?.some((d: { path: string; message: string }) => d.path === field && message.test(d.message)));
      if (!ok) failures.push(`${method} ${url.slice(0, 120)} [${field}] → ${res.statusCode} ${JSON.stringify(body).slice(0, 160)}`);
    };

    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));
    // Routes left out of the OpenAPI document take input too.
    for (const path of ['/health', '/ready', '/widget.js', '/demo', '/api/v1/openapi.json']) {
      if (!doc.paths[path]) operations.push({ path, method: 'GET', op: {} });
    }
    // Deletes last, the project's own last: should one get through, the rest still find their rows.
    const rank = (o: { path: string; method: string }) => (o.method === 'DELETE' ? 1 : 0) + (o.method === 'DELETE' && o.path === '/api/v1/admin/projects/{projectId}' ? 1 : 0);
    operations.sort((a, b) => rank(a) - rank(b));
    const missingBodies = operations.filter(({ path, method, op }) => op.requestBody?.content['application/json'] && !bodies[`${method} ${path}`]);
    expect(missingBodies.map((o) => `${o.method} ${o.path}`), 'every JSON body route needs a valid body here').toEqual([]);

    for (const { path, method, op } of operations) {
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const fill = (nulIn?: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === nulIn ? `a%00b` : encodeURIComponent(ids[name] ?? `missing-${name}`)));
      const body = bodies[`${method} ${path}`];
      for (const name of pathParams) await expectRefused(method, fill(name), name, body);
      const queryNames = [...(op.parameters ?? []).filter((q) => q.in === 'query').map((q) => q.name), 'unlisted'];
      for (const name of queryNames) await expectRefused(method, `${fill()}?${name}=a%00b`, name, body);
      if (body !== undefined) {
        for (const leaf of stringLeaves(body)) await expectRefused(method, fill(), leaf.join('.'), withNulAt(body, leaf));
        // Half of a surrogate pair, which JSON can write ("\ud800"): stored as a different
        // replacement on each database, and as neither what was sent.
        for (const leaf of stringLeaves(body)) await expectRefused(method, fill(), leaf.join('.'), withNulAt(body, leaf, '\ud800'), /unpaired surrogate/);
        // A key with U+0000 is refused like a value.
        if (body !== null && typeof body === 'object' && !Array.isArray(body)) await expectRefused(method, fill(), 'k\\u0000', { ...body, [`k${NUL}`]: 'v' });
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(150);
    expect(logs.join('')).not.toContain('unhandled error');
  });

  it('answers a body nested twenty thousand arrays deep with a 4xx on every route, never a 500 or a 413', async () => {
    // The check for U+0000 walked a body by recursion, once per level: such a body, a few tens of
    // kilobytes, overflowed the stack before any route's validation (a 500 on every JSON route).
    // The project of the test before, when it ran: a second one would spend the admin token's budget.
    if (!ids.projectId) await everythingProject();
    const doc = t.app.swagger() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
    const bodies = validBodies(ids, p.hmacSecret, 'a long password 1');
    // 40 kB: under every route's body limit, so that each body is read and walked (not a 413).
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const failures: string[] = [];
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const body = bodies[`${method.toUpperCase()} ${path}`];
        if (!op.requestBody?.content['application/json'] || body === undefined) continue;
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? `missing-${name}`));
        const admin = url.startsWith('/api/v1/admin/');
        // The project's secret key where it serves, so that the admin token's budget (600 a minute,
        // mostly spent by the test before) is left for the routes that need it.
        const projectRoute = url.startsWith(`/api/v1/admin/projects/${p.project.id}/`);
        // In place of each string leaf, and beside the body's own fields.
        const payloads = stringLeaves(body).map((leaf) => JSON.stringify(withNulAt(body, leaf, '\u0001DEEP')).replace(/"[^"]*\\u0001DEEPx"/, deep));
        if (body !== null && typeof body === 'object' && !Array.isArray(body)) payloads.push(JSON.stringify({ ...body, deep: 'DEEP' }).replace('"DEEP"', deep));
        expect(payloads.every((payload) => payload.includes('[[[[[[[[')), `${method} ${path}`).toBe(true);
        for (const payload of payloads) {
          checked++;
          const res = await t.app.inject({
            method: method.toUpperCase() as InjectOptions['method'],
            url,
            headers: { ...(projectRoute ? { authorization: `Bearer ${p.secretKey}` } : admin ? adminAuth() : auth(p.publicKey)), 'content-type': 'application/json' },
            payload,
          });
          if (res.statusCode >= 500 || res.statusCode === 413) failures.push(`${method.toUpperCase()} ${path} → ${res.statusCode} ${res.body.slice(0, 120)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
    expect(logs.join('')).not.toContain('unhandled error');
  });

  it('refuses U+0000 that arrives encoded: in a paging cursor, in identity token claims, in an upload field', async () => {
    const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const p = await createProject(t);
    const pid = p.project.id;
    const action = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${pid}/actions`,
      headers: adminAuth(),
      payload: { name: 'lookup', description: 'Look up', url: 'http://127.0.0.1:9/x' },
    });
    expect(action.statusCode, action.body).toBe(201);
    const pagedWithCursor = [
      { url: `/api/v1/chat/conversations?userId=cust-1&cursor=${cursor(['2024-01-01T00:00:00.000Z', `conv_${NUL}`])}`, headers: auth(p.publicKey) },
      { url: `/api/v1/admin/projects/${pid}/conversations?cursor=${cursor(['2024-01-01T00:00:00.000Z', `conv_${NUL}`])}`, headers: adminAuth() },
      { url: `/api/v1/admin/projects/${pid}/actions/${action.json().action.id}/calls?cursor=${cursor([`2024${NUL}`, 'call_x'])}`, headers: adminAuth() },
      { url: `/api/v1/admin/projects/${pid}/activity?after=${cursor({ t: `2024-01-01T00:00:00.000Z${NUL}` })}`, headers: adminAuth() },
    ];
    for (const { url, headers } of pagedWithCursor) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ error: 'Validation error' });
    }

    for (const claims of [{ sub: `cust${NUL}` }, { sub: 'cust-6', email: `c6${NUL}@example.com` }, { sub: 'cust-6', name: `Cee${NUL}` }]) {
      const token = signHs256(p.hmacSecret, claims);
      const identify = await t.app.inject({ method: 'POST', url: '/api/v1/identity/identify', headers: auth(p.publicKey), payload: { token } });
      expect(identify.statusCode, identify.body).toBe(401);
      expect(identify.json()).toEqual({ verified: false, error: 'Invalid identity token' });
      // The same token as proof of identity on a runtime call proves nothing (and breaks nothing).
      const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey, { 'x-user-token': token }), payload: { endUserExternalId: 'cust-6' } });
      expect(created.statusCode, created.body).toBe(201);
    }
    const users = await t.deps.store.db.selectFrom('end_users').select(['external_id', 'verified_at']).where('project_id', '=', pid).where('external_id', '=', 'cust-6').execute();
    expect(users).toEqual([{ external_id: 'cust-6', verified_at: null }]);

    const upload = multipart({ name: 'notes.txt', type: 'text/plain', data: 'Some notes.' }, { title: `Notes${NUL}` });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${pid}/knowledge/files`, headers: adminAuth(upload.headers), payload: upload.payload });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: [{ path: 'title', message: expect.stringMatching(/U\+0000/) }] });
  });

  /**
   * Asks "Hours?" of a project whose model is the fake, which answers in the deltas `text`: the text
   * streamed, the conversation's stored rows and the last message its history shows.
   */
  async function askFake(text: string[]) {
    const viaFake = await createProject(t, { model: 'openai-compatible:fake' });
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(viaFake.publicKey), payload: {} });
    const conversationId = created.json().conversationId as string;
    fake.enqueue({ text });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(viaFake.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Hours?' }] },
    });
    expect(res.statusCode).toBe(200);
    const rows = await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
    const history = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(viaFake.publicKey) });
    return { streamed: streamedText((await parseAnswer(res.body)).chunks), rows, last: history.json().messages.at(-1) };
  }

  it('stores an answer whose model output holds U+0000, without it', async () => {
    const { streamed, rows, last } = await askFake(['Our hours', `${NUL} are nine`, ` to five.${NUL}`]);
    expect(streamed).toBe('Our hours are nine to five.');
    expect(rows.map((r) => [r.role, r.status, r.content])).toEqual([
      ['user', 'complete', 'Hours?'],
      ['assistant', 'complete', 'Our hours are nine to five.'],
    ]);
    expect(last).toMatchObject({ role: 'assistant', content: 'Our hours are nine to five.' });
  });

  it('stores model output holding half a surrogate pair as the same text on both databases: U+FFFD in its place', async () => {
    // A pair split over two deltas is whole again in the stored text; a lone half is not.
    const { rows, last } = await askFake(['Open \ud83d', '\ude00 daily', ' \ud800!']);
    const row = rows.find((r) => r.role === 'assistant')!;
    expect(row.content).toBe('Open 😀 daily \ufffd!');
    expect(JSON.parse(row.parts!).find((p: { type: string }) => p.type === 'text').text).toBe('Open 😀 daily \ufffd!');
    expect(last).toMatchObject({ role: 'assistant', content: 'Open 😀 daily \ufffd!' });
  });

  it('keeps an emoji split over two deltas whole when one of them also holds U+0000', async () => {
    const { streamed, rows } = await askFake([`Open${NUL} \ud83d`, '\ude00 daily']);
    expect(streamed).toBe('Open 😀 daily');
    expect(rows.find((r) => r.role === 'assistant')!.content).toBe('Open 😀 daily');
  });

  it('stores an answer whose tool call and action response hold U+0000, without it', async () => {
    const viaFake = await createProject(t, { model: 'openai-compatible:fake' });
    const made = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${viaFake.project.id}/actions`,
      headers: adminAuth(),
      payload: {
        name: 'respond',
        description: 'Answer with a given body',
        url: `${ep.base}/respond`,
        parameters: { type: 'object', properties: { type: { type: 'string' }, body: { type: 'string' }, note: { type: 'string' } } },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    // The same database through an app that may call a loopback endpoint.
    const local = await createTestApp({
      dialect,
      store: t.deps.store,
      env: { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true', OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake' },
    });
    try {
      const created = await local.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(viaFake.publicKey), payload: {} });
      const conversationId = created.json().conversationId as string;
      const args = { type: 'application/json', body: '{"note":"a\\u0000b","list":["c\\u0000"]}', note: `x${NUL}y` };
      fake.enqueue({ toolCalls: [{ name: 'respond', arguments: args }] }, { text: 'Done.' });
      const res = await local.app.inject({
        method: 'POST',
        url: '/api/v1/chat/messages',
        headers: auth(viaFake.publicKey),
        payload: { conversationId, messages: [{ role: 'user', content: 'Answer me' }] },
      });
      expect(res.statusCode).toBe(200);
      // The endpoint got the model's arguments as written.
      expect(ep.receivedAt('/respond').at(-1)!.rawUrl).toContain('note=x%00y');
      const { chunks } = await parseAnswer(res.body);
      expect(chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { status: 200, body: { note: 'ab', list: ['c'] } } });

      const rows = await local.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
      expect(rows.map((r) => [r.role, r.status, r.content])).toEqual([
        ['user', 'complete', 'Answer me'],
        ['assistant', 'complete', 'Done.'],
      ]);
      const call = (JSON.parse(rows[1]!.parts!) as Array<{ type: string; input?: unknown; output?: unknown }>).find((x) => x.type === 'tool-respond')!;
      expect(call.input).toEqual({ ...args, note: 'xy' });
      expect(call.output).toMatchObject({ status: 200, body: { note: 'ab', list: ['c'] } });
      expect(holdsNul(JSON.parse(rows[1]!.parts!))).toBe(false);
    } finally {
      await local.close();
    }
  });

  it('ingests uploaded documents that hold U+0000, without it', async () => {
    const pid = (await createProject(t)).project.id;
    const files = [
      { name: 'guide.md', type: 'text/markdown', data: `# Warranty${NUL}\n\nThe warranty${NUL} lasts two years from delivery.\n` },
      { name: 'page.html', type: 'text/html', data: `<html><head><title>Care${NUL}</title></head><body><main><h1>Care</h1><p>Wash${NUL} the cover at thirty degrees and let it dry flat in the shade.</p></main></body></html>` },
      { name: 'notes.txt', type: 'text/plain', data: `Spare${NUL} parts ship within a week.` },
      // UTF-16 text read as UTF-8 is mostly U+0000 between the letters.
      { name: 'wide.txt', type: 'text/plain', data: Buffer.from('Gift cards never expire.', 'utf16le') },
    ];
    for (const file of files) {
      const upload = multipart(file);
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${pid}/knowledge/files`, headers: adminAuth(upload.headers), payload: upload.payload });
      expect(res.statusCode, res.body).toBe(201);
      const source = await waitForSource(t.app, pid, res.json().source.id);
      expect(source, file.name).toMatchObject({ status: 'ready', error: null });
      expect(source.title).not.toContain(NUL);
      const chunks = await t.deps.store.db.selectFrom('knowledge_chunks').select(['title', 'text', 'heading_path']).where('source_id', '=', source.id).execute();
      expect(chunks.length).toBeGreaterThan(0);
      expect(holdsNul(chunks)).toBe(false);
    }
    const found = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${pid}/knowledge/search?q=gift%20cards%20expire`, headers: adminAuth() });
    expect(found.json().results[0].text).toBe('Gift cards never expire.');
  });
});
