import { isDeepStrictEqual } from 'node:util';
import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { $ZodType, safeParse } from 'zod/v4/core';
import { API_PREFIX } from './auth.js';
import type { AuthRequirement } from './context.js';

/**
 * A response a route sends without Fastify's JSON serializer (a stream, HTML, a pre-serialized
 * body), or one that carries headers: declared as OpenAPI declares it, with zod schemas inside.
 */
export interface MediaResponse {
  description: string;
  /** Headers the response always carries (documented as required). */
  headers?: Record<string, $ZodType>;
  content?: Record<string, { schema: $ZodType; example?: unknown }>;
}

/** Parts of a request that the handler reads itself: documented, never validated by Fastify. */
export interface DocumentedRequest {
  /** A multipart/form-data body (the knowledge upload). */
  multipartBody?: $ZodType;
  /** Request headers the handler reads (`If-None-Match`). */
  headers?: $ZodType;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Documentation only: see `DocumentedRequest`. */
    documented?: DocumentedRequest;
  }
}

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/**
 * Tags, declared once. Every operation has exactly one (checked at boot), so generated clients and
 * reference pages group each operation in one place.
 */
export const OPENAPI_TAGS = [
  { name: 'chat', description: 'Runtime: conversations, messages (the streamed answer) and feedback. Public or secret key.' },
  { name: 'identity', description: 'Runtime: verify an end user by HMAC or JWT. Public or secret key.' },
  { name: 'widget', description: 'Runtime: the widget configuration, the widget script and a demo page.' },
  { name: 'projects', description: 'Admin: projects, their API keys and HMAC secret. Admin token or the project secret key.' },
  { name: 'knowledge', description: "Admin: a project's knowledge sources, their ingestion and retrieval." },
  { name: 'actions', description: "Admin: custom actions (the project's own HTTP endpoints the agent may call) and their call log." },
  { name: 'skills', description: 'Admin: skills, named workflows the agent offers and follows.' },
  { name: 'conversations', description: "Admin: list, read and close a project's conversations." },
  { name: 'insight', description: 'Admin: the live activity feed and analytics.' },
  { name: 'health', description: 'Liveness and readiness probes for load balancers. No key.' },
  { name: 'auth', description: 'Dashboard sign-in: sessions (the `answerdesk_session` cookie), first-run setup, invites, password.' },
  { name: 'users', description: 'Admin: dashboard users, their project roles and invites. Owners (or the admin token) only.' },
  { name: 'metrics', description: 'Prometheus metrics of one node, with the metrics token (ANSWERDESK_METRICS_TOKEN); off without it.' },
  { name: 'webhooks', description: "Admin: webhook endpoints that receive the project's events (Standard Webhooks), their deliveries and retries." },
  { name: 'evals', description: 'Admin: answer regression tests: question sets run through retrieval and the agent, with their metrics.' },
  { name: 'gaps', description: 'Admin: knowledge gaps, the questions the agent could not answer, and answering them.' },
];

/** Headers shared by many responses, referenced from `components.headers`. */
const HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the current window (60 s) of the operation’s bucket.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'When the current window ends, in Unix epoch seconds.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds until the window resets and requests are counted again.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Request-Id': {
    description: 'Id of this request (`req_…`), also in the server log line of the request.',
    required: true,
    schema: { type: 'string' },
  },
};

const errorContent = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });

/**
 * Error responses that come from the HTTP layer rather than from one route: which of them an
 * operation can answer follows from its `config.auth` and from what it accepts (see `commonResponses`).
 */
const COMMON_RESPONSES = {
  ValidationFailed: { status: '400', description: 'Validation error: a parameter or the body does not match the schema, or the body is not JSON.', schema: 'ValidationError' },
  Unauthorized: {
    status: '401',
    description:
      'Missing, malformed, unknown or revoked credential: `{"error":"Unauthorized"}`. Runtime operations take a project key (public or secret); admin operations the instance admin token or the project’s secret key.',
    schema: 'Error',
  },
  Forbidden: {
    status: '403',
    description:
      'A dashboard session whose role does not allow the operation, or a session-cookie write sent from another site: `{"error":"Forbidden"}`.',
    schema: 'Error',
  },
  OriginNotAllowed: {
    status: '403',
    description: 'The project lists `allowedOrigins` and the request’s `Origin` is not one of them: `{"error":"Origin not allowed"}`.',
    schema: 'Error',
  },
  PayloadTooLarge: {
    status: '413',
    description:
      'The body is over the operation’s limit (100 KiB unless its description says otherwise): `{"error":"Request body too large"}`.',
    schema: 'Error',
  },
  UnsupportedMediaType: {
    status: '415',
    description: 'A body in another content type than the operation accepts: `{"error":"Unsupported media type"}`.',
    schema: 'Error',
  },
  RateLimited: {
    status: '429',
    description: 'Rate limit of the operation’s bucket exceeded: `{"error":"Rate limit exceeded"}`. Retry after `Retry-After` seconds.',
    schema: 'Error',
  },
  ServiceUnavailable: {
    status: '503',
    description:
      'The database cannot be reached or timed out, or the node is shutting down: `{"error":"Service unavailable"}`. Retry after `Retry-After` seconds.',
    schema: 'Error',
  },
  InternalError: {
    status: '500',
    description: 'Unexpected server error: `{"error":"Internal server error"}`; the details are only in the server log, under the `X-Request-Id`.',
    schema: 'Error',
  },
} as const;
type CommonResponse = keyof typeof COMMON_RESPONSES;

/** Vendor keys the route transform leaves on an operation for the document pass; removed there. */
const AUTH_MARK = 'x-answerdesk-auth';
const OPTIONAL_BODY_MARK = 'x-answerdesk-optional-body';
const VALIDATED_MARK = 'x-answerdesk-validated';

const isZod = (value: unknown): value is $ZodType => value instanceof $ZodType;

/** One zod schema as the document's JSON Schema, through fastify-type-provider-zod's own conversion. */
function toJsonSchema(input: Parameters<SwaggerTransform>[0], schema: $ZodType): Record<string, unknown> {
  const out = jsonSchemaTransform({ ...input, schema: { response: { 200: schema } } as FastifySchema });
  const json = { ...((out.schema.response as Record<string, Record<string, unknown>>)[200]) };
  delete json.$schema;
  delete json.$id;
  return json;
}

/**
 * Per route: zod schemas become JSON Schema (fastify-type-provider-zod), responses declared with
 * media types (streams, HTML, headers) keep them, public routes need no key, and the route's auth
 * requirement is left on the operation for the document pass below.
 */
const transform: SwaggerTransform = (input) => {
  const { schema, route } = input;
  if (!schema || schema.hide) return jsonSchemaTransform(input);
  const { response, documented, ...rest } = schema as FastifySchema & { response?: Record<string, unknown> };
  const zodResponses: Record<string, unknown> = {};
  const mediaResponses: Record<string, MediaResponse> = {};
  for (const [status, r] of Object.entries(response ?? {})) {
    if (isZod(r)) zodResponses[status] = r;
    else mediaResponses[status] = r as MediaResponse;
  }
  const converted = jsonSchemaTransform({
    ...input,
    schema: {
      ...rest,
      response: zodResponses,
      ...(documented?.multipartBody ? { body: documented.multipartBody, consumes: ['multipart/form-data'] } : {}),
      ...(documented?.headers ? { headers: documented.headers } : {}),
    } as FastifySchema,
  });
  const out = converted.schema as Record<string, unknown> & { response: Record<string, unknown> };
  for (const [status, r] of Object.entries(mediaResponses)) {
    out.response[status] = {
      description: r.description,
      ...(r.headers
        ? { headers: Object.fromEntries(Object.entries(r.headers).map(([name, s]) => [name, toJsonSchema(input, s)])) }
        : {}),
      ...(r.content
        ? {
            content: Object.fromEntries(
              Object.entries(r.content).map(([type, m]) => [
                type,
                { schema: toJsonSchema(input, m.schema), ...(m.example === undefined ? {} : { example: m.example }) },
              ]),
            ),
          }
        : { type: 'null' }),
    };
  }
  const auth = route.config?.auth ?? 'admin';
  out[AUTH_MARK] = auth;
  // Only what Fastify validates can fail validation (documented-only parts cannot).
  if (rest.params || rest.querystring || rest.body || rest.headers) out[VALIDATED_MARK] = true;
  // Fastify accepts a missing body when the schema does (POST /chat/conversations); @fastify/swagger
  // always writes `required: true`.
  if (isZod(schema.body) && safeParse(schema.body, undefined).success) out[OPTIONAL_BODY_MARK] = true;
  if (auth === 'none') out.security = [];
  return converted;
};

type Json = Record<string, any>;
type Operation = Json & { responses: Record<string, Json> };

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/** Error statuses that the HTTP layer may answer for an operation, on top of the route's own. */
function commonResponses(method: string, op: Operation, auth: AuthRequirement, validated: boolean): CommonResponse[] {
  // Fastify reads a body sent with these methods whether or not the route declares one: a body
  // that is not JSON, too large or of another content type is refused on a route without one too.
  const readsBody = op.requestBody || BODY_METHODS.has(method);
  const list: CommonResponse[] = [];
  if (validated || readsBody) list.push('ValidationFailed');
  if (auth !== 'none') list.push('Unauthorized');
  if (auth === 'runtime') list.push('OriginNotAllowed');
  if (auth === 'admin') list.push('Forbidden');
  if (readsBody) list.push('PayloadTooLarge', 'UnsupportedMediaType');
  if (auth !== 'none') list.push('RateLimited', 'InternalError', 'ServiceUnavailable');
  return list;
}

/** Every `$ref` to a component schema in `node`, recursively. */
function collectRefs(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) into.add(value.slice(21));
      else collectRefs(value, into);
    }
  }
}

function renameRefs(node: unknown, renames: Map<string, string>): void {
  if (Array.isArray(node)) for (const item of node) renameRefs(item, renames);
  else if (node && typeof node === 'object') {
    const obj = node as Json;
    for (const [key, value] of Object.entries(obj)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const to = renames.get(value.slice(21));
        if (to) obj.$ref = `#/components/schemas/${to}`;
      } else renameRefs(value, renames);
    }
  }
}

/**
 * The named schemas: fastify-type-provider-zod emits every registered schema twice (`X` as sent,
 * `XInput` as accepted). Keep the ones the document uses, give an input-only schema its plain name,
 * and merge the two forms where they are the same JSON, so generated types read `ChatMessage`, not
 * `ChatMessageInput`.
 */
function tidySchemas(doc: Json): void {
  const schemas: Record<string, Json> = doc.components.schemas;
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  const used = (): Set<string> => {
    const seen = new Set<string>();
    collectRefs(doc.paths, seen);
    collectRefs(doc.components.responses, seen);
    const queue = [...seen];
    while (queue.length) {
      const inner = new Set<string>();
      collectRefs(schemas[queue.pop()!], inner);
      for (const name of inner) if (!seen.has(name)) (seen.add(name), queue.push(name));
    }
    return seen;
  };
  for (;;) {
    const inUse = used();
    const renames = new Map<string, string>();
    for (const name of inUse) {
      if (!name.endsWith('Input')) continue;
      const plain = name.slice(0, -'Input'.length);
      if (!(plain in schemas)) continue;
      if (!inUse.has(plain)) renames.set(name, plain);
      else {
        const probe = structuredClone(schemas[name]);
        renameRefs(probe, new Map([...inUse].filter((n) => n.endsWith('Input')).map((n) => [n, n.slice(0, -5)])));
        if (isDeepStrictEqual(probe, schemas[plain])) renames.set(name, plain);
      }
    }
    if (!renames.size) break;
    for (const [from, to] of renames) {
      schemas[to] = schemas[from];
      delete schemas[from];
    }
    renameRefs(doc, renames);
  }
  const inUse = used();
  for (const name of Object.keys(schemas)) if (!inUse.has(name)) delete schemas[name];
  doc.components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The whole document, after every route: named schemas (zod registry), the errors and headers the
 * HTTP layer adds to every operation it guards (401, 403 Origin, 413, 415, 429, 500, 503; the rate-limit
 * headers on every response of a rate-limited operation), and optional bodies.
 */
const transformObject: SwaggerTransformObject = (input) => {
  const doc = jsonSchemaTransformObject(input) as Json;
  doc.components.headers = HEADERS;
  doc.components.responses = Object.fromEntries(
    Object.entries(COMMON_RESPONSES).map(([name, r]) => [
      name,
      {
        description: r.description,
        headers: Object.fromEntries(
          [...RATE_LIMIT_HEADERS, ...(name === 'RateLimited' || name === 'ServiceUnavailable' ? ['Retry-After'] : []), 'X-Request-Id'].map((h) => [h, { $ref: `#/components/headers/${h}` }]),
        ),
        content: errorContent(r.schema),
      },
    ]),
  );
  for (const item of Object.values(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      const auth = op[AUTH_MARK] as AuthRequirement;
      const validated = op[VALIDATED_MARK] === true;
      delete op[AUTH_MARK];
      delete op[VALIDATED_MARK];
      if (op[OPTIONAL_BODY_MARK]) op.requestBody.required = false;
      delete op[OPTIONAL_BODY_MARK];
      const rateLimited = auth !== 'none';
      for (const name of commonResponses(method, op, auth, validated)) {
        const { status, description, schema } = COMMON_RESPONSES[name];
        if (op.responses[status]) continue;
        // Public operations are not counted, so their copies carry no rate-limit headers.
        op.responses[status] = rateLimited
          ? { $ref: `#/components/responses/${name}` }
          : { description, headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }, content: errorContent(schema) };
      }
      for (const response of Object.values(op.responses)) {
        if (response.$ref) continue;
        const own: Record<string, Json> = response.headers ?? {};
        for (const header of Object.values(own)) if (!header.$ref) header.required = true;
        response.headers = {
          ...(rateLimited ? Object.fromEntries(RATE_LIMIT_HEADERS.map((h) => [h, { $ref: `#/components/headers/${h}` }])) : {}),
          'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
          ...own,
        };
      }
      op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  tidySchemas(doc);
  return doc;
};

/**
 * Every documented route says what a generated client and a reader need: an operationId, a summary,
 * a description and exactly one declared tag. Checked when the route is added, so a route without
 * them stops the boot instead of shipping an anonymous operation.
 */
function checkDocumented(route: RouteOptions): void {
  const schema = route.schema as FastifySchema | undefined;
  if (route.method === 'HEAD' || route.url === '*' || !schema || schema.hide) return;
  const where = `${String(route.method)} ${route.url}`;
  if (!schema.operationId) throw new Error(`${where} needs an operationId in its schema`);
  if (!schema.summary || !schema.description) throw new Error(`${where} needs a summary and a description in its schema`);
  if (schema.tags?.length !== 1 || !OPENAPI_TAGS.some((t) => t.name === schema.tags![0])) {
    throw new Error(`${where} needs exactly one tag, one of: ${OPENAPI_TAGS.map((t) => t.name).join(', ')}`);
  }
}

/**
 * The OpenAPI 3.1 document is generated from the same zod schemas that validate requests and
 * serialize responses, so it cannot drift from the code. /docs serves Swagger UI from the package's
 * own files (no CDN).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', checkDocumented);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'AnswerDesk API',
        version: '1.0.0',
        description:
          'Runtime API of the AnswerDesk support agent (chat, identity, feedback, widget configuration) and its admin API. ' +
          'Every operation under /api/v1 is rate-limited: each of its responses carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`, and 429 adds `Retry-After`. ' +
          'A method a path does not have answers 405 with `Allow`.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'A project key (`ad_pk_…` public, `ad_sk_…` secret), or on admin operations the instance admin token.',
          },
          bearer: { type: 'http', scheme: 'bearer', description: 'The same credential as `Authorization: Bearer …`.' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'answerdesk_session',
            description: 'The dashboard session (admin operations only), set by `POST /api/v1/auth/login`; writes must come from the same origin.',
          },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }, { session: [] }],
      tags: OPENAPI_TAGS,
    },
    transform,
    transformObject,
  });
  // Swagger UI registers its own routes (page, assets, the JSON and YAML document): all public.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'none' };
    });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true },
      staticCSP: true,
    });
  });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { auth: 'none' } }, async () => app.swagger());
}
