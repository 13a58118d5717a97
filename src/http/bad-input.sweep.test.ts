import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminAuth, answeredConversation, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { waitForSource } from '../../test/support/knowledge.js';
import { validBodies } from '../../test/support/valid-bodies.js';
import { createUser } from '../accounts/users.js';
import { startKnowledgeWorker } from '../knowledge/jobs.js';
import type { CreatedProject } from '../projects/projects.js';
import { CURSORS, DATES, fieldMutations, setAt, toText, typesOf, type Json, type Schema } from '../../test/support/schema-mutations.js';

/**
 * Bad input always gets a clear error with the right status, and nothing is lost or half-written.
 * Every operation of the served OpenAPI document gets a bounded, fixed set of malformed inputs
 * generated from its own schema: each body field of the wrong JSON type, strings far over their
 * length or empty or holding U+0000 or half a surrogate pair, numbers out of range, fractional or
 * beyond a double (`1e309` as raw JSON), unknown keys, a body that is no object or no JSON or not
 * JSON at all, path ids that are malformed, long or oddly escaped, query parameters of the wrong
 * type or repeated. The answer is never a 5xx; a 4xx is a documented status of the operation with
 * the `{error}` body (`details` on a validation error, `verified: false` on the identity routes);
 * and a refused request leaves every table as it was (no row added or removed) and a refused
 * update leaves its resource as it was. What the operation's schema forbids must be refused.
 *
 * Accepted on purpose, so not marked as refused: a query parameter the operation does not declare
 * (and `limit[]`, which is another name), a UTF-8 byte order mark before the JSON, a `charset`
 * other than UTF-8 on JSON (JSON is UTF-8 whatever the label says), a JSON body sent to an
 * operation that declares none (ignored, like an unknown query parameter), `null` or nothing for
 * an optional body, and blank or odd but well-formed strings where the schema sets no minimum or
 * pattern (names, page context, URLs a webhook or action may point at here, where the private
 * network is allowed).
 */

interface Operation {
  method: string;
  path: string;
  op: Schema;
}
/** One malformed request of an operation: what was changed, and the request. */
interface Probe {
  what: string;
  url: string;
  payload?: string | Buffer;
  contentType?: string;
  /** The request is malformed by the operation's own schema: it must be refused. */
  refused?: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Rate limits are not what this checks (they have their own tests); the sweep makes thousands of calls. */
const NO_LIMIT = 1_000_000_000;
/** The dashboard's origin in these tests; session-cookie writes must come from it. */
const HOST = 'dash.example';
const SAME_ORIGIN = { host: HOST, 'sec-fetch-site': 'same-origin', origin: `http://${HOST}` };
const PASSWORD = 'correct horse battery';

describe.each(dialects)('bad input on $name', { timeout: 240_000 }, (dialect) => {
  let t: TestApp;
  let p: CreatedProject;
  let doc: Schema;
  let cookie: Record<string, string>;
  const ids: Record<string, string> = {};
  const logs: string[] = [];
  let tables: string[];

  beforeAll(async () => {
    t = await createTestApp({
      dialect,
      // Loopback URLs are accepted for actions, sources and webhooks; nothing here is delivered.
      env: { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
      logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } },
    });
    const consume = t.deps.limiter.consume.bind(t.deps.limiter);
    vi.spyOn(t.deps.limiter, 'consume').mockImplementation((bucket, _limit, key) => consume(bucket, NO_LIMIT, key));
    doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    await everything();
    tables = (await t.deps.store.db.introspection.getTables()).map((table) => table.name).filter((name) => !name.startsWith('kysely_'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** A project with one of everything, so that each route gets path ids and a body valid but for what a probe changes. */
  async function everything(): Promise<void> {
    p = await createProject(t, { model: 'builtin' });
    ids.projectId = p.project.id;
    const admin = async (method: InjectOptions['method'], path: string, payload?: unknown) => {
      const res = await t.app.inject({ method, url: `/api/v1/admin/projects/${p.project.id}${path}`, headers: adminAuth(), payload: payload as InjectOptions['payload'] });
      expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeLessThan(300);
      return res.json();
    };
    const worker = startKnowledgeWorker(t.deps, { pollMs: 20 });
    const source = (await admin('POST', '/knowledge', { type: 'text', title: 'Hours', content: 'We are open nine to five on weekdays.' })).source;
    ids.sourceId = (await waitForSource(t.app, p.project.id, source.id)).id;
    await worker.stop();
    ids.actionId = (await admin('POST', '/actions', { name: 'lookup', description: 'Look up', url: 'http://127.0.0.1:9/x/{q}', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } })).action.id;
    ids.skillId = (await admin('POST', '/skills', { name: 'Returns', description: 'Return an item', instructions: 'Ask for the order number.' })).skill.id;
    ids.keyId = (await admin('POST', '/keys', { kind: 'public', name: 'spare' })).key.id;
    ids.webhookId = (await admin('POST', '/webhooks', { url: 'http://localhost:9/hook' })).webhook.id;
    ids.deliveryId = (await admin('POST', `/webhooks/${ids.webhookId}/test`)).delivery.id;
    ids.evalId = (await admin('POST', '/evals', { name: 'Hours', cases: [{ question: 'When are you open?', mustContain: ['nine'] }] })).eval.id;
    ids.runId = (await admin('POST', `/evals/${ids.evalId}/run`)).run.id;

    const member = await createUser(t.deps.store.db, { email: 'member@example.com', name: 'Member', role: 'member', password: PASSWORD });
    ids.userId = member.id;
    await createUser(t.deps.store.db, { email: 'owner@example.com', name: 'Owner', role: 'owner', password: PASSWORD });
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: SAME_ORIGIN, payload: { email: 'owner@example.com', password: PASSWORD } });
    expect(login.statusCode, login.body).toBe(200);
    cookie = { ...SAME_ORIGIN, cookie: String(login.headers['set-cookie']).split(';')[0]! };
    const invite = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers: adminAuth(), payload: { email: 'later@example.com', role: 'member' } });
    ids.inviteId = invite.json().invite.id;

    ({ conversationId: ids.conversationId, messageId: ids.messageId } = await answeredConversation(t, p.publicKey, 'Do you sell gift cards in Berlin?'));
    const gaps = (await admin('GET', '/gaps')).gaps as Array<{ id: string }>;
    expect(gaps.length, 'the declined question is a gap').toBeGreaterThan(0);
    ids.gapId = gaps[0]!.id;
  }



  /** Valid values of the query parameters an operation requires. */
  const requiredQuery: Record<string, string> = { userId: 'cust-1', q: 'hours', token: 'invite-token-value' };

  const headersFor = (path: string): Record<string, string> => {
    if (path.startsWith('/api/v1/admin/')) return adminAuth();
    if (path.startsWith('/api/v1/auth/')) return cookie;
    if (path.startsWith('/api/v1/')) return auth(p.publicKey);
    return {};
  };

  const deref = (s: Schema): Schema => (s?.$ref ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s);

  function operations(): Operation[] {
    const ops = Object.entries<Schema>(doc.paths).flatMap(([path, item]) =>
      Object.entries<Schema>(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
    // Writes that change what later probes rely on (a deleted row, a rotated secret, a closed
    // conversation, a signed-out session) go last, the project's own delete very last.
    const rank = ({ method, path }: Operation) =>
      (method === 'DELETE' ? 2 : 0) + (/rotate|close|handback|logout|handoff$/.test(path) ? 1 : 0) + (method === 'DELETE' && path === '/api/v1/admin/projects/{projectId}' ? 2 : 0);
    return ops.sort((a, b) => rank(a) - rank(b));
  }

  const fill = (path: string, override: Record<string, string> = {}) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => (name in override ? override[name]! : encodeURIComponent(ids[name] ?? `missing-${name}`)));

  /** Malformed path parameters: each in turn, the others valid. */
  function pathProbes({ path }: Operation): Probe[] {
    const probes: Probe[] = [];
    for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
      const valid = ids[name!] ?? 'x';
      const prefix = valid.includes('_') ? valid.slice(0, valid.indexOf('_') + 1) : '';
      const values = [
        'x', '%20', 'a'.repeat(65), 'a'.repeat(3000), `${prefix}${'a'.repeat(3000)}`, '%FF', '%C0%AF', '%ED%A0%80', '%E0%A4%A', '%2F', '%2e%2e', '%25',
        'null', '0', '1e309', '%F0%9F%98%80', '%7B%7D', encodeURIComponent(valid.toUpperCase()), encodeURIComponent(`${valid} `), `${encodeURIComponent(valid)}%00`,
        `${prefix}`, encodeURIComponent(`${prefix}${'Z'.repeat(22)}`),
      ];
      for (const value of values) probes.push({ what: `path ${name}=${value.slice(0, 24)}`, url: fill(path, { [name!]: value }) });
    }
    return probes;
  }

  /** Query parameters of the wrong type, empty, huge, repeated or bracketed; and one that is not declared. */
  function queryProbes({ path, op }: Operation): Probe[] {
    const params = (op.parameters ?? []).filter((q: Schema) => q.in === 'query') as Schema[];
    const base = params.filter((q) => q.required).map((q) => `${q.name}=${encodeURIComponent(requiredQuery[q.name] ?? 'x')}`);
    const url = (extra: string[], without?: string) => `${fill(path)}?${[...base.filter((b) => !without || !b.startsWith(`${without}=`)), ...extra].join('&')}`;
    const refused = true;
    const probes: Probe[] = [{ what: 'query unknown', url: url(['unknownParam=1']) }, { what: 'query broken escape', url: url(['%ZZ=%E0%A4%A']) }];
    for (const q of params) {
      const n = q.name as string;
      const values = ['abc', '', '-1', '0', '1.5', '1e309', '99999999999999999999', 'a'.repeat(5000), 'true', 'null', '%FF', '%ED%A0%80', '%00', '%20'];
      const schema = deref(q.schema ?? {});
      if (schema.minimum !== undefined) values.push(String(schema.minimum), String(schema.minimum - 1));
      if (schema.maximum !== undefined) values.push(String(schema.maximum), String(schema.maximum + 1));
      if (schema.maxLength) values.push('x'.repeat(schema.maxLength), 'x'.repeat(schema.maxLength + 1));
      if (schema.format === 'date-time') values.push(...DATES.map(encodeURIComponent));
      const cursors = /cursor|after/.test(n) ? CURSORS.map((c) => (typeof c === 'string' ? c : Buffer.from(JSON.stringify(c)).toString('base64url'))) : [];
      // What the parameter's schema itself forbids must be refused; a cursor that is not one the server made, too.
      const forbidden = (value: string) =>
        cursors.includes(value) ||
        (value === '' && (schema.minLength ?? 0) > 0) ||
        (schema.maxLength !== undefined && decodeURIComponent(value).length > schema.maxLength) ||
        (schema.enum !== undefined && !schema.enum.includes(value)) ||
        (schema.type === 'integer' && (!/^-?\d+$/.test(value) || Number(value) < (schema.minimum ?? -Infinity) || Number(value) > (schema.maximum ?? Infinity)));
      values.push(...cursors);
      for (const value of values) probes.push({ what: `query ${n}=${value.slice(0, 24)}`, url: url([`${n}=${value}`], n), refused: !/%/.test(value) && forbidden(value) });
      probes.push({ what: `query ${n} repeated`, url: url([`${n}=1`, `${n}=2`], n), refused });
      probes.push({ what: `query ${n} without value`, url: url([n], n) });
      probes.push({ what: `query ${n}[]`, url: url([`${n}[]=1`], n) });
      probes.push({ what: `query ${n}[a]`, url: url([`${n}[a]=1`], n) });
      if (q.required) probes.push({ what: `query ${n} missing`, url: url([], n) });
    }
    return probes;
  }

  /** Upload bodies a browser or a script may send that are not one readable file. */
  function multipartProbes({ path }: Operation): Probe[] {
    const url = fill(path);
    const boundary = 'sweepboundary';
    const type = `multipart/form-data; boundary=${boundary}`;
    const part = (disposition: string, data: string | Buffer, contentType = 'text/plain') =>
      Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; ${disposition}\r\ncontent-type: ${contentType}\r\n\r\n`), Buffer.from(data), Buffer.from('\r\n')]);
    const end = Buffer.from(`--${boundary}--\r\n`);
    const form = (...parts: Buffer[]) => Buffer.concat([...parts, end]);
    const file = (filename: string, data: string | Buffer = 'Some notes.', contentType?: string) => part(`name="file"; filename="${filename}"`, data, contentType);
    // `true`: no file AnswerDesk can read, so it must be refused (400 or 413), and nothing stored.
    const cases: Array<[string, Buffer | string, string?, boolean?]> = [
      ['no parts', end, undefined, true],
      ['title only', form(part('name="title"', 'Notes')), undefined, true],
      ['empty unnamed file', form(file('')), undefined, true],
      ['empty file', form(file('notes.txt', '')), undefined, true],
      ['two files', form(file('a.txt'), file('b.txt')), undefined, true],
      ['six fields', form(...Array.from({ length: 6 }, (_, i) => part(`name="f${i}"`, 'v')), file('a.txt')), undefined, true],
      ['title U+0000', form(part('name="title"', 'No\u0000tes'), file('a.txt')), undefined, true],
      ['title far over length', form(part('name="title"', 't'.repeat(100_000)), file('a.txt'))],
      ['filename U+0000 (RFC 5987)', form(part(`name="file"; filename*=UTF-8''a%00b.txt`, 'Some notes.'))],
      ['filename with raw U+0000', form(file('a\u0000b.txt'))],
      ['filename invalid UTF-8 (RFC 5987)', form(part(`name="file"; filename*=UTF-8''%ED%A0%80.txt`, 'Some notes.'))],
      ['filename far over length', form(file(`${'n'.repeat(5000)}.txt`))],
      ['filename only an extension', form(file('.txt'))],
      ['filename a path', form(file('../../etc/passwd.txt'))],
      ['unsupported file type', form(file('notes.docx')), undefined, true],
      ['PNG named .txt', form(file('notes.txt', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]))), undefined, true],
      ['odd-length UTF-16', form(file('notes.txt', Buffer.from([0xff, 0xfe, 0x61])))],
      ['invalid UTF-8 text', form(file('notes.md', Buffer.from([0x23, 0x20, 0xc3, 0x28, 0xff, 0x0a])))],
      ['text with U+0000', form(file('notes.txt', 'Some\u0000notes.'))],
      ['HTML with an unknown charset', form(file('page.html', '<meta charset="x-unknown-charset"><p>Hello</p>'))],
      ['HTML with the replacement charset', form(file('page.html', '<meta charset="replacement"><p>Hello</p>'))],
      ['HTML with a UTF-16 charset', form(file('page.html', '<meta charset="utf-16"><p>Hello</p>'))],
      ['PDF header only', form(file('doc.pdf', '%PDF-'))],
      ['not a PDF named .pdf', form(file('doc.pdf', 'plain text')), undefined, true],
      ['cut off', Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nSome`)]), undefined, true],
      ['other boundary', form(file('a.txt')).toString().replaceAll(boundary, 'otherboundary'), undefined, true],
      ['no content-disposition', Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-type: text/plain\r\n\r\nx\r\n`), end]), undefined, true],
      ['JSON instead', '{"title":"x"}', 'application/json', true],
      ['multipart without boundary', form(file('a.txt')), 'multipart/form-data', true],
      ['empty body', '', type, true],
    ];
    return cases.map(([what, payload, contentType, refused]) => ({ what: `upload ${what}`, url, payload, contentType: contentType ?? type, refused }));
  }

  /** The body as a whole: not an object, not JSON, or not declared JSON; then each field by its schema. */
  function bodyProbes({ path, op }: Operation, body: Json | undefined): Probe[] {
    const url = fill(path);
    const json = 'application/json';
    // A route without a body runs its handler whatever JSON comes: only bodies that cannot be read are sent to it.
    const refused = true;
    const probes: Probe[] = [
      { what: 'body truncated JSON', url, payload: '{"a":', contentType: json, refused },
      { what: 'body bad JSON', url, payload: "{'a':1}", contentType: json, refused },
      { what: 'body two documents', url, payload: '{}{}', contentType: json, refused },
      { what: 'body NaN', url, payload: 'NaN', contentType: json, refused },
      // JSON text is UTF-8: bytes that are not would be stored as U+FFFD, not as sent.
      { what: 'body invalid UTF-8', url, payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), contentType: json, refused },
      { what: 'body __proto__', url, payload: '{"__proto__":{"polluted":true}}', contentType: json, refused },
      { what: 'body constructor.prototype', url, payload: '{"constructor":{"prototype":{"polluted":true}}}', contentType: json, refused },
      { what: 'body unknown media type', url, payload: 'a=1', contentType: 'application/x-unknown', refused },
      { what: 'body multipart without boundary', url, payload: 'a=1', contentType: 'multipart/form-data', refused },
    ];
    if (body === undefined) return probes;
    const text = toText(body);
    const schema = op.requestBody?.content?.[json]?.schema;
    const isObject = typesOf(schema ?? {}, deref)?.has('object') ?? false;
    const optional = op.requestBody?.required === false;
    const needsField = (deref(schema ?? {}).required ?? []).length > 0;
    probes.push(
      { what: 'body top-level array', url, payload: '[]', contentType: json, refused: isObject },
      { what: 'body array of the object', url, payload: `[${text}]`, contentType: json, refused: isObject },
      { what: 'body string', url, payload: '"x"', contentType: json, refused: isObject },
      { what: 'body number', url, payload: '1', contentType: json, refused: isObject },
      { what: 'body 1e309', url, payload: '1e309', contentType: json, refused: isObject },
      { what: 'body true', url, payload: 'true', contentType: json, refused: isObject },
      // An optional body may be left out: an empty body (and here `null`) means none.
      { what: 'body null', url, payload: 'null', contentType: json, refused: !optional },
      { what: 'body empty object', url, payload: '{}', contentType: json, refused: needsField },
      { what: 'body empty', url, payload: '', contentType: json, refused: !optional },
      { what: 'body as text/plain', url, payload: text, contentType: 'text/plain', refused },
      { what: 'body as form', url, payload: 'name=x', contentType: 'application/x-www-form-urlencoded', refused },
      { what: 'body with BOM', url, payload: `\ufeff${text}`, contentType: json },
      { what: 'body JSON charset latin1', url, payload: text, contentType: 'application/json; charset=latin1' },
    );
    if (!schema) return probes;
    // Sign-in and password routes spend a 32 MiB scrypt run on every well-formed request (a wrong
    // e-mail as much as a wrong password): there only what the schema refuses is sent, which keeps
    // the sweep within its time.
    const hashes = path.startsWith('/api/v1/auth/');
    for (const m of fieldMutations('', schema, body, false, deref)) {
      if ((m.value === undefined && m.path.length === 0) || (hashes && !m.refused)) continue;
      probes.push({ what: `body ${m.label}`, url, payload: toText(setAt(body, m.path, m.value)), contentType: json, refused: m.refused });
    }
    return probes;
  }

  /** A request that does not end is a finding too, not a test that hangs. */
  async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer in ${ms} ms`)), ms)));
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function counts(): Promise<Record<string, number>> {
    const select = tables.map((name) => `(select count(*) from ${name}) as ${name}`).join(', ');
    const { rows } = await sql<Record<string, number | string>>`select ${sql.raw(select)}`.execute(t.deps.store.db);
    return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
  }

  /** What is wrong with a refused request's answer, or null. */
  function badAnswer(operation: Operation, probe: Probe, res: LightMyRequestResponse): string | null {
    const status = res.statusCode;
    if (status >= 500) return `${status} ${res.body.slice(0, 200)}`;
    if (status < 400) return null;
    if (!String(res.headers['content-type']).startsWith('application/json')) return `${status} is not JSON: ${res.headers['content-type']}`;
    let body: Record<string, unknown>;
    try {
      body = res.json();
    } catch {
      return `${status} body is not JSON: ${res.body.slice(0, 120)}`;
    }
    if (typeof body.error !== 'string' || body.error === '') return `${status} without an error string: ${res.body.slice(0, 160)}`;
    const identity = operation.path.startsWith('/api/v1/identity/');
    const allowed = new Set(['error', 'details', ...(identity ? ['verified'] : [])]);
    const extra = Object.keys(body).filter((k) => !allowed.has(k));
    if (extra.length) return `${status} with unexpected fields ${extra.join(', ')}`;
    if (body.details !== undefined) {
      if (body.error !== 'Validation error') return `${status} details on "${body.error}"`;
      const ok = Array.isArray(body.details) && body.details.every((d) => d && typeof d.path === 'string' && typeof d.message === 'string' && Object.keys(d).length === 2);
      if (!ok) return `${status} malformed details: ${JSON.stringify(body.details).slice(0, 160)}`;
    }
    if (identity && status === 400 && body.verified !== false) return `${status} identity error without verified:false`;
    // A path that names no route is answered by the router (404, or 405 for a known path).
    const routed = !probe.what.startsWith('path ') || (status !== 404 && status !== 405);
    if (routed && !(String(status) in operation.op.responses)) return `${status} is not a documented status of the operation: ${res.body.slice(0, 120)}`;
    return null;
  }

  it('answers every malformed input of every operation with a documented 4xx and its error body, and writes nothing', async () => {
    const bodies = validBodies(ids, p.hmacSecret, PASSWORD);
    const failures: string[] = [];
    let sent = 0;
    let before: Record<string, number> | undefined;
    const ops = operations();
    const missing = ops.filter(({ method, path, op }) => op.requestBody?.content['application/json'] && !bodies[`${method} ${path}`]);
    expect(missing.map((o) => `${o.method} ${o.path}`), 'every JSON body route needs a valid body here').toEqual([]);

    for (const operation of ops) {
      const { method, path, op } = operation;
      const body = bodies[`${method} ${path}`];
      // An event stream that opens stays open: only probes that cannot open one are sent to it.
      const stream = Object.values<Schema>(op.responses).some((r) => r.content?.['text/event-stream']);
      const probes = [...pathProbes(operation), ...(method === 'GET' && !stream ? queryProbes(operation) : []), ...(method === 'GET' ? [] : op.requestBody?.content['multipart/form-data'] ? multipartProbes(operation) : bodyProbes(operation, body))];
      // The resource an update names, to compare before and after a refused update.
      const readBack = (method === 'PATCH' || method === 'PUT') && doc.paths[path]?.get ? fill(path) : undefined;
      for (const probe of probes) {
        const headers: Record<string, string> = { ...headersFor(path) };
        // A malformed path is sent with the valid body, so that the path is what is refused.
        let payload = probe.payload;
        if (payload === undefined && body !== undefined && probe.what.startsWith('path')) payload = toText(body);
        if (payload !== undefined) headers['content-type'] = probe.contentType ?? 'application/json';
        if (method !== 'GET') before ??= await counts();
        const resourceBefore = readBack ? (await t.app.inject({ method: 'GET', url: readBack, headers: headersFor(path) })).body : undefined;
        const res = await within(5_000, `${method} ${path} [${probe.what}]`, t.app.inject({ method: method as InjectOptions['method'], url: probe.url, headers, ...(payload === undefined ? {} : { payload }) }));
        sent++;
        const where = `${method} ${path} [${probe.what}]`;
        const problem = badAnswer(operation, probe, res);
        if (problem) failures.push(`${where} → ${problem}`);
        if (probe.refused && res.statusCode < 400) failures.push(`${where} → ${res.statusCode}: accepted ${res.body.slice(0, 120)}`);
        // Reads are not counted around (listing gaps records them, by design): the next write's
        // probe counts afresh before it is sent.
        if (method === 'GET') {
          before = undefined;
          continue;
        }
        const after = await counts();
        if (res.statusCode >= 400) {
          const changed = tables.filter((name) => after[name] !== before![name]).map((name) => `${name} ${before![name]}→${after[name]}`);
          if (changed.length) failures.push(`${where} → ${res.statusCode} but rows changed: ${changed.join(', ')}`);
          if (readBack) {
            const resourceAfter = (await t.app.inject({ method: 'GET', url: readBack, headers: headersFor(path) })).body;
            if (resourceAfter !== resourceBefore) failures.push(`${where} → ${res.statusCode} but the resource changed`);
          }
        }
        before = after;
      }
    }
    expect(failures).toEqual([]);
    expect(logs.join('')).not.toContain('unhandled error');
    expect(sent).toBeGreaterThan(2000);
  });
});
