import { z } from 'zod';
import {
  ACTION_METHODS,
  ACTION_NAME_PATTERN,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  SECRET_MASK,
} from '../../actions/definition.js';
import { wholeNumberParam } from '../../lib/query-number.js';
import { projectParams } from '../projects/admin-schema.js';

export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 30_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_HEADERS = 20;

const actionName = z
  .string()
  .regex(ACTION_NAME_PATTERN, 'must start with a letter or "_" and contain only letters, digits, "_" and "-" (at most 64 characters)')
  .describe('Tool name the model calls; unique in the project.');

const headerName = z.string().max(256).regex(HEADER_NAME_PATTERN, 'must be a valid header name');
const headerValue = z.string().max(8192).regex(HEADER_VALUE_PATTERN, 'must not contain line breaks');

const headerInput = z.union([
  headerValue.describe('Secret when the name looks like a credential (Authorization, Cookie, *key*, *token*, *secret*, …) or the header already holds a stored secret.'),
  z
    .object({
      value: headerValue,
      secret: z.boolean().optional().describe('Force secret (write-only, encrypted at rest) or not.'),
    })
    .strict(),
]);

const headersInput = z
  .record(headerName, headerInput)
  .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
  .meta({
    description: `Static request headers. Secret values are never shown again; in a PATCH, "${SECRET_MASK}" keeps the stored value.`,
    maxProperties: MAX_HEADERS,
  });

const paramList = z.array(z.string().min(1).max(64)).max(100);

const parameters = z
  .record(z.string(), z.unknown())
  .describe('JSON Schema (draft-07) of the arguments; must be `type: "object"`.');

const examples = z
  .array(z.string().min(1).max(300))
  .max(20)
  .describe('Phrases a user might say to trigger the action; shown to the model and used by the builtin model.');

const timeoutMs = z.number().int().min(MIN_TIMEOUT_MS).max(MAX_TIMEOUT_MS).describe('Whole-call time budget in milliseconds.');

export const createActionBody = z
  .object({
    name: actionName,
    description: z.string().min(1).max(1024).describe('What the action does, for the model.'),
    method: z.enum(ACTION_METHODS).default('GET'),
    url: z.string().min(1).max(2048).describe('http(s) URL; `{param}` placeholders take arguments (URL-encoded).'),
    headers: headersInput.default({}),
    parameters: parameters.default({ type: 'object', properties: {} }),
    query: paramList
      .optional()
      .describe('Arguments sent in the query string. Default: every non-path argument for GET/DELETE.'),
    body: paramList
      .optional()
      .describe('Arguments sent as JSON body fields. Default: every non-path argument for POST/PUT/PATCH.'),
    examples: examples.default([]),
    timeoutMs: timeoutMs.default(DEFAULT_TIMEOUT_MS),
    enabled: z.boolean().default(true),
  })
  .strict()
  .meta({ id: 'CreateActionRequest', description: 'A new action.' });
export type CreateActionBody = z.infer<typeof createActionBody>;

export const patchActionBody = z
  .object({
    name: actionName,
    description: z.string().min(1).max(1024),
    method: z.enum(ACTION_METHODS),
    url: z.string().min(1).max(2048),
    headers: headersInput.describe(`Replaces every header. A secret header sent as "${SECRET_MASK}" keeps its stored value.`),
    parameters,
    query: paramList.nullable().describe('null: back to the default mapping.'),
    body: paramList.nullable().describe('null: back to the default mapping.'),
    examples,
    timeoutMs,
    enabled: z.boolean(),
  })
  .partial()
  .strict()
  .meta({ id: 'UpdateActionRequest', description: 'Fields to change; `headers` replaces the whole set.' });
export type PatchActionBody = z.infer<typeof patchActionBody>;

export const actionSchema = z
  .object({
    id: z.string().describe('`act_…`'),
    projectId: z.string(),
    name: z.string(),
    description: z.string(),
    method: z.enum(ACTION_METHODS),
    url: z.string(),
    headers: z
      .record(z.string(), z.object({ value: z.string(), secret: z.boolean() }))
      .describe(`Configured headers; secret values read "${SECRET_MASK}".`),
    parameters: z.record(z.string(), z.unknown()),
    query: z.array(z.string()).nullable(),
    body: z.array(z.string()).nullable(),
    examples: z.array(z.string()),
    timeoutMs: z.number().int(),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Action', description: 'A custom action: an HTTP endpoint of yours the agent may call as a tool.' });
export type Action = z.infer<typeof actionSchema>;

export const actionWrapped = z.object({ action: actionSchema }).meta({ id: 'ActionResponse', description: 'An action.' });
export const actionList = z
  .object({ actions: z.array(actionSchema).describe('Oldest first.') })
  .meta({ id: 'ActionList', description: "A project's actions." });

export const actionParams = projectParams.extend({
  actionId: z.string().min(1).max(64).describe('Action id (`act_…`).'),
});

export const testActionBody = z
  .object({
    arguments: z.record(z.string(), z.unknown()).default({}).describe('Arguments, as the model would pass them.'),
    userTokens: z
      .record(headerName, z.string().max(4096))
      .refine((t) => Object.keys(t).length <= 10, 'at most 10 user tokens')
      .meta({ maxProperties: 10 })
      .default({})
      .describe('Headers to forward as if sent by an end user (masked in the result).'),
    endUserId: z.string().min(1).max(256).optional().describe('Sent as X-AnswerDesk-User-Id, as for a verified end user.'),
  })
  .strict()
  .meta({ id: 'TestActionRequest', description: 'Arguments and user tokens for one test call. Optional.' })
  .nullish();

const detail = z.object({ path: z.string(), message: z.string() });

export const testActionResult = z
  .object({
    ok: z.boolean().describe('The endpoint answered with a status below 400.'),
    error: z
      .object({ code: z.string(), message: z.string(), details: z.array(detail).optional() })
      .nullable()
      .describe('Why no response came back (invalid arguments, refused address, timeout, network).'),
    request: z
      .object({ method: z.string(), url: z.string(), headers: z.record(z.string(), z.string()), body: z.string().nullable() })
      .nullable()
      .describe('The request as sent; secret headers and user tokens masked.'),
    response: z
      .object({
        status: z.number().int(),
        headers: z.record(z.string(), z.string()),
        contentType: z.string().nullable(),
        body: z.string().describe('Decoded body (first 64 KiB), secrets masked.'),
        truncated: z.boolean().describe('More than 1 MiB was sent; only the first MiB was read.'),
        forModel: z.string().describe('Exactly what the model would be given.'),
      })
      .nullable(),
    latencyMs: z.number().int(),
  })
  .meta({ id: 'ActionTestResult', description: 'The request made and the response received, secrets masked.' });

export const actionCallSchema = z
  .object({
    id: z.string(),
    createdAt: z.string(),
    source: z.enum(['agent', 'test']),
    conversationId: z.string().nullable(),
    outcome: z.enum(['ok', 'error']),
    status: z.number().int().nullable().describe('HTTP status, when the endpoint answered.'),
    latencyMs: z.number().int(),
    error: z.string().nullable(),
  })
  .meta({ id: 'ActionCall', description: 'One call of an action, by the agent or a test.' });
export type ActionCall = z.infer<typeof actionCallSchema>;

export const listCallsQuery = z.object({
  limit: wholeNumberParam(1, 100, 50),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page.'),
});

export const actionCallList = z
  .object({
    calls: z.array(actionCallSchema).describe('Newest first.'),
    nextCursor: z.string().optional(),
  })
  .meta({ id: 'ActionCallList', description: "One page of an action's call log." });
