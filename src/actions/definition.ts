import type { Selectable } from 'kysely';
import type { ActionsTable } from '../store/schema.js';
import type { JsonSchemaObject } from './json-schema.js';
import type { SecretBox } from '../lib/secret-box.js';

export const ACTION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ActionMethod = (typeof ACTION_METHODS)[number];

/** Methods whose arguments go to the query string unless mapped otherwise. */
export const QUERY_METHODS: ReadonlySet<ActionMethod> = new Set(['GET', 'DELETE']);

/** A tool name every model provider accepts (OpenAI's and Anthropic's rules). */
export const ACTION_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/** A header name (RFC 9110 token). */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value without line breaks or NUL: nothing can be smuggled into another header. */
export const HEADER_VALUE_PATTERN = /^[^\r\n\0]*$/;

/** Shown instead of a secret value. Sending it back in a PATCH keeps the stored value. */
export const SECRET_MASK = '********';

/** The end user's id goes to action endpoints in this header, and only when verified. */
export const USER_ID_HEADER = 'x-answerdesk-user-id';

/**
 * Headers neither an action definition nor a user token may set: connection framing belongs to the
 * HTTP client, and the user-id header is AnswerDesk's own statement about identity.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  USER_ID_HEADER,
]);

/** Header names whose plain-string values are treated as secret unless marked otherwise. */
const SENSITIVE_NAME = /^(authorization|proxy-authorization|cookie)$|key|token|secret|passw|auth|session|signature|credential/i;

export function isSensitiveHeaderName(name: string): boolean {
  return SENSITIVE_NAME.test(name);
}

/** A configured header with its plain value (only ever held in memory while a call is made). */
export interface ActionHeader {
  name: string;
  value: string;
  secret: boolean;
}

/** How a header sits in the `headers` column: secret values only as AES-256-GCM envelopes. */
export type StoredHeader = { name: string; secret: false; value: string } | { name: string; secret: true; enc: string };

/** An action ready to run: secrets decrypted, JSON columns parsed. */
export interface ActionDefinition {
  id: string;
  projectId: string;
  name: string;
  description: string;
  method: ActionMethod;
  url: string;
  headers: ActionHeader[];
  parameters: JsonSchemaObject;
  /** The stored schema text: the key under which its argument validator is compiled. */
  parametersText: string;
  query: string[] | null;
  body: string[] | null;
  examples: string[];
  timeoutMs: number;
  enabled: boolean;
}

export type ActionRow = Selectable<ActionsTable>;

/** Additional authenticated data of a header secret: it opens only for this action and header. */
export function secretContext(actionId: string, headerName: string): string {
  return `action:${actionId}:header:${headerName.toLowerCase()}`;
}

export function parseStoredHeaders(row: Pick<ActionRow, 'headers'>): StoredHeader[] {
  return JSON.parse(row.headers) as StoredHeader[];
}

/** The fields every view of an action row shares, parsed from their stored JSON. */
export function actionFields(row: ActionRow) {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    method: row.method,
    url: row.url,
    parameters: JSON.parse(row.parameters) as JsonSchemaObject,
    query: row.query_params ? (JSON.parse(row.query_params) as string[]) : null,
    body: row.body_params ? (JSON.parse(row.body_params) as string[]) : null,
    examples: JSON.parse(row.examples) as string[],
    timeoutMs: row.timeout_ms,
    enabled: row.enabled === 1,
  };
}

/** The row as an executable definition; decrypts the secret header values. */
export function toDefinition(row: ActionRow, box: SecretBox): ActionDefinition {
  return {
    ...actionFields(row),
    headers: parseStoredHeaders(row).map((h) =>
      h.secret ? { name: h.name, secret: true, value: box.open(h.enc, secretContext(row.id, h.name)) } : h,
    ),
    parametersText: row.parameters,
  };
}
