import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminAuth, auth, createProject, createTestApp, type TestApp } from '../../test/helper.js';
import { addSource } from '../../test/support/knowledge.js';
import { parseAnswer } from '../../test/ui-stream.js';
import { startKnowledgeWorker } from '../knowledge/jobs.js';
import type { CreatedProject } from '../projects/projects.js';

type Json = Record<string, any>;
interface Op {
  method: string;
  path: string;
  op: Json;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function operations(doc: Json): Op[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}

/** A response, following a `$ref` into components.responses. */
const resolve = (doc: Json, response: Json): Json =>
  response.$ref ? doc.components.responses[response.$ref.replace('#/components/responses/', '')] : response;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('OpenAPI document and reference', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  });
  afterAll(() => t.close());

  it('serves a valid OpenAPI 3.1 document without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const served = res.json();
    expect(served.openapi).toBe('3.1.0');
    expect(served.info.version).toBe('1.0.0');
    // A standard validator: checks the document against the OpenAPI 3.1 schema and resolves every $ref.
    await expect(SwaggerParser.validate(structuredClone(served))).resolves.toBeTruthy();
  });

  it('documents the runtime endpoints from the same zod schemas that validate them', () => {
    const list = doc.paths['/api/v1/chat/conversations'];
    expect(list.post).toBeDefined();
    const query = list.get.parameters.find((p: { name: string }) => p.name === 'userId');
    expect(query).toMatchObject({ in: 'query', required: true, schema: { minLength: 1 } });
    expect(doc.paths['/api/v1/chat/conversations/{conversationId}'].get).toBeDefined();
    // The document itself and Swagger UI's files stay out of it.
    expect(doc.paths['/api/v1/openapi.json']).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
  });

  it('documents /health and /ready as public operations', () => {
    for (const path of ['/health', '/ready']) {
      const op = doc.paths[path].get;
      expect(op.security).toEqual([]);
      expect(op.tags).toEqual(['health']);
      expect(op.responses['200'].content['application/json'].schema.properties.status).toBeDefined();
    }
    expect(Object.keys(doc.paths['/ready'].get.responses)).toEqual(['200', '503']);
  });

  it('gives every operation an operationId, a summary, a description and exactly one declared tag', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(40);
    const ids = ops.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = (doc.tags as Array<{ name: string; description: string }>).map((tag) => tag.name);
    expect(new Set(tags).size).toBe(tags.length);
    expect(doc.tags.every((tag: { description?: string }) => (tag.description ?? '').length > 10)).toBe(true);
    for (const { method, path, op } of ops) {
      expect({ where: `${method} ${path}`, summary: !!op.summary, description: (op.description ?? '').length > 10, tags: op.tags.length }).toEqual({
        where: `${method} ${path}`,
        summary: true,
        description: true,
        tags: 1,
      });
      expect(tags).toContain(op.tags[0]);
    }
    // Every declared tag has operations; knowledge operations sit under one tag only.
    expect(new Set(ops.map(({ op }) => op.tags[0]))).toEqual(new Set(tags));
    expect(ops.filter(({ path }) => path.includes('/knowledge')).every(({ op }) => op.tags[0] === 'knowledge')).toBe(true);
  });

  it('names the shared shapes under components.schemas and refers to them by name', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'Conversation', 'ConversationSummary', 'ConversationList', 'Message', 'ChatMessage', 'PageContext', 'UserTokens',
        'SendMessageRequest', 'UIMessageChunk', 'Feedback', 'WidgetConfig', 'Skill', 'Error', 'ValidationError',
        'Project', 'ProjectSettings', 'ApiKey', 'KnowledgeSource', 'Action', 'AdminSkill', 'AdminConversation', 'EndUser', 'Analytics',
      ]),
    );
    // One name per shape: no leftover "…Input" twins of the generator.
    expect(Object.keys(schemas).filter((name) => name.endsWith('Input'))).toEqual([]);
    const json = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema;
    expect(json('/api/v1/chat/conversations', 'post', '201')).toEqual(schemaRef('Conversation'));
    expect(json('/api/v1/chat/conversations', 'get', '200')).toEqual(schemaRef('ConversationList'));
    expect(schemas.ConversationList.properties.conversations.items).toEqual(schemaRef('ConversationSummary'));
    expect(schemas.ConversationMessages.properties.messages.items).toEqual(schemaRef('Message'));
    expect(json('/api/v1/widget/config', 'get', '200')).toEqual(schemaRef('WidgetConfig'));
    expect(schemas.WidgetConfig.properties.availableSkills.items).toEqual(schemaRef('Skill'));
    expect(schemas.FeedbackResponse.properties.feedback).toEqual(schemaRef('Feedback'));
    expect(json('/api/v1/chat/conversations/{conversationId}', 'get', '404')).toEqual(schemaRef('Error'));
    const send = doc.paths['/api/v1/chat/messages'].post.requestBody.content['application/json'].schema;
    expect(send).toEqual(schemaRef('SendMessageRequest'));
    const body = schemas.SendMessageRequest.properties;
    expect(body.messages.items).toEqual(schemaRef('ChatMessage'));
    expect(body.pageContext).toEqual(schemaRef('PageContext'));
    expect(body.userTokens).toEqual(schemaRef('UserTokens'));
    expect(schemas.UserTokens).toMatchObject({ type: 'object', maxProperties: 10, additionalProperties: { maxLength: 4096 } });
    expect(schemas.ProjectResponse.properties.project).toEqual(schemaRef('Project'));
    expect(schemas.KeyList.properties.keys.items).toEqual(schemaRef('ApiKey'));
    expect(schemas.KnowledgeSourceList.properties.sources.items).toEqual(schemaRef('KnowledgeSource'));
    expect(schemas.ActionList.properties.actions.items).toEqual(schemaRef('Action'));
  });

  it('declares optional request bodies optional, and the server accepts them absent', async () => {
    const required = Object.fromEntries(operations(doc).filter(({ op }) => op.requestBody).map(({ op }) => [op.operationId, op.requestBody.required]));
    expect(required).toMatchObject({ createConversation: false, createKey: false, testAction: false, sendMessage: true, submitFeedback: true, createProject: true });
    const p = await createProject(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    expect(res.statusCode).toBe(201);
    const key = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers: adminAuth() });
    expect(key.statusCode).toBe(201);
  });

  it('documents the errors and headers of the HTTP layer on every operation it guards', () => {
    const guarded = operations(doc).filter(({ op }) => !Array.isArray(op.security));
    expect(guarded.length).toBeGreaterThan(40);
    for (const { method, path, op } of guarded) {
      const where = `${method} ${path}`;
      const statuses = Object.keys(op.responses);
      const runtime = !path.startsWith('/api/v1/admin');
      const expected = ['401', '429', '500', ...(runtime ? ['403'] : []), ...(op.requestBody ? ['400', '413', '415'] : [])];
      expect({ where, missing: expected.filter((s) => !statuses.includes(s)) }).toEqual({ where, missing: [] });
      // X-RateLimit-* on every response (success and error alike); Retry-After on 429.
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const headers = Object.keys(resolve(doc, response).headers ?? {});
        expect({ where, status, headers }).toEqual({ where, status, headers: expect.arrayContaining([...RATE_LIMIT_HEADERS, 'X-Request-Id']) });
      }
      expect(Object.keys(resolve(doc, op.responses['429']).headers)).toContain('Retry-After');
      if (runtime) expect(resolve(doc, op.responses['403']).description).toContain('Origin not allowed');
    }
    expect(doc.components.headers['X-RateLimit-Reset']).toMatchObject({ required: true, schema: { type: 'integer' } });
    // Public operations are not counted: no rate-limit headers there.
    const open = operations(doc).filter(({ op }) => Array.isArray(op.security));
    // Sign-in is how a session is obtained: public, with its own failure limit instead of the buckets.
    const signIn = ['/api/v1/auth/invite', '/api/v1/auth/invite', '/api/v1/auth/login', '/api/v1/auth/logout', '/api/v1/auth/me', '/api/v1/auth/password', '/api/v1/auth/setup', '/api/v1/auth/setup'];
    expect(open.map(({ path }) => path).sort()).toEqual([...signIn, '/demo', '/demo/shop/orders/{orderId}', '/health', '/metrics', '/ready', '/widget.js']);
    for (const { op } of open) for (const response of Object.values(op.responses as Record<string, Json>)) expect(Object.keys(response.headers)).not.toContain('X-RateLimit-Limit');
  });

  it('answers as documented: 401 with rate-limit headers without a key, 415 for a body it cannot read', async () => {
    const p = await createProject(t, { rateLimits: { general: 10_000, session: 10_000, chat: 10_000 } });
    const undocumented: string[] = [];
    for (const { method, path, op } of operations(doc).filter(({ op }) => !Array.isArray(op.security))) {
      const url = path.replace('{projectId}', p.project.id).replace(/\{(\w+)\}/g, 'x_0000000000000000000000');
      const admin = path.startsWith('/api/v1/admin');
      const check = (label: string, res: { statusCode: number; headers: Json }) => {
        const documented = Object.keys(op.responses).includes(String(res.statusCode));
        const headers = RATE_LIMIT_HEADERS.every((h) => res.headers[h.toLowerCase()] !== undefined);
        if (!documented || !headers) undocumented.push(`${label} ${method.toUpperCase()} ${path} -> ${res.statusCode}`);
      };
      const anonymous = await t.app.inject({ method: method.toUpperCase() as 'GET', url });
      expect(anonymous.statusCode).toBe(401);
      check('no key', anonymous);
      if (op.requestBody) {
        const res = await t.app.inject({
          method: method.toUpperCase() as 'POST',
          url,
          headers: { ...(admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : auth(p.publicKey)), 'content-type': 'application/xml' },
          payload: '<message>hello</message>',
        });
        expect(res.statusCode).toBe(415);
        expect(res.json()).toEqual({ error: 'Unsupported media type' });
        check('xml body', res);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it('describes the send-message answer as the AI SDK UI message stream, and real answers match that description', async () => {
    const op = doc.paths['/api/v1/chat/messages'].post;
    const ok = op.responses['200'];
    expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
    expect(ok.headers['x-vercel-ai-ui-message-stream'].schema).toMatchObject({ const: 'v1' });
    expect(ok.content['text/event-stream'].schema).toMatchObject({ type: 'string', contentSchema: schemaRef('UIMessageChunk') });
    expect(ok.description).toContain('data: [DONE]');
    const kinds = doc.components.schemas.UIMessageChunk.oneOf.map((s: Json) => s.properties.type.const ?? s.properties.type.enum?.[0]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'start', 'start-step', 'text-start', 'text-delta', 'text-end', 'tool-input-start', 'tool-input-delta', 'tool-input-available',
        'tool-input-error', 'tool-output-available', 'tool-output-error', 'source-url', 'source-document', 'error', 'finish-step', 'finish',
      ]),
    );

    // Real answers, checked against the document's own JSON Schema and the AI SDK's parser: one
    // with a knowledge search and a citation, one that fails before it starts.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validChunk = ajv.compile({ components: doc.components, $ref: '#/components/schemas/UIMessageChunk' });
    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      const cited = await createProject(t);
      await addSource(t.app, cited.project.id, {
        type: 'faq',
        title: 'Billing FAQ',
        items: [{ question: 'How long do refunds take?', answer: 'Refunds take 5 business days after we receive the item.' }],
      });
      const broken = await createProject(t, { model: 'openai:gpt-4o-mini' });
      const seen = new Set<string>();
      for (const p of [cited, broken] as CreatedProject[]) {
        const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/chat/messages',
          headers: auth(p.publicKey),
          payload: { conversationId: conv.json().conversationId, messages: [{ role: 'user', content: 'How long do refunds take?' }] },
        });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('text/event-stream');
        expect(res.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
        const { chunks, raw } = await parseAnswer(res.body);
        const events = raw.split('\n\n').filter(Boolean);
        expect(events.at(-1)).toBe('data: [DONE]');
        for (const event of events.slice(0, -1)) {
          if (event.startsWith(':')) continue;
          expect(event.startsWith('data: ')).toBe(true);
          const data = JSON.parse(event.slice('data: '.length));
          expect({ data, valid: validChunk(data), errors: validChunk.errors }).toMatchObject({ valid: true });
          seen.add(data.type);
        }
        expect(chunks.length).toBe(events.filter((e) => e.startsWith('data: {')).length);
      }
      expect([...seen]).toEqual(
        expect.arrayContaining(['start', 'start-step', 'tool-input-start', 'tool-input-available', 'tool-output-available', 'source-document', 'text-delta', 'finish', 'error']),
      );
    } finally {
      await worker.stop();
    }
  });

  it('serves the interactive reference from local files (no CDN)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const srcs = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThan(0);
    for (const src of srcs) expect(src).not.toMatch(/^(https?:)?\/\//);
    const script = srcs.find((s) => s.endsWith('.js'))!;
    const asset = await t.app.inject({ method: 'GET', url: new URL(script, 'http://x/docs/').pathname });
    expect(asset.statusCode).toBe(200);
  });
});

describe('health and readiness', () => {
  it('answers /health and /ready without a key, and /ready reports the database', async () => {
    const t = await createTestApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', database: 'ok', redis: 'disabled' });
      await t.deps.store.close();
      const down = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ status: 'unavailable', database: 'error' });
    } finally {
      await t.app.close();
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)('reports Redis when the limiter uses it', async () => {
    const t = await createTestApp({ redisUrl: process.env.TEST_REDIS_URL });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready', database: 'ok', redis: 'ok' });
      await t.deps.limiter.close();
      const down = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ redis: 'error' });
    } finally {
      await t.app.close();
      await t.deps.store.close();
    }
  });
});
