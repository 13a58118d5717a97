import type { ErrorDetail } from '../lib/errors.js';
import {
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  QUERY_METHODS,
  RESERVED_HEADERS,
  USER_ID_HEADER,
  type ActionDefinition,
  type ActionMethod,
} from './definition.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** The parameter names a URL template refers to, in order of appearance, without repeats. */
export function urlPlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** Where a URL template sends requests (placeholders, which never sit in the host, filled); null when it is no URL. */
export function urlTemplateTarget(template: string): URL | null {
  try {
    return new URL(template.replace(PLACEHOLDER, 'a'));
  } catch {
    return null;
  }
}

/**
 * Problems with a URL template. Placeholders may only sit in the path or query, never in the
 * scheme, host or port: a model must not choose where a request goes. Credentials in the URL are
 * refused because the URL is shown in plain text; they belong in (encrypted) headers.
 */
export function checkUrlTemplate(template: string): ErrorDetail[] {
  const bad = (message: string): ErrorDetail[] => [{ path: 'url', message }];
  const withA = template.replace(PLACEHOLDER, 'a');
  if (/[{}]/.test(withA)) return bad('has a "{" or "}" that is not a {parameter} placeholder');
  let a: URL;
  let b: URL;
  try {
    a = new URL(withA);
    b = new URL(template.replace(PLACEHOLDER, 'b'));
  } catch {
    return bad('must be an absolute http(s) URL');
  }
  if (a.protocol !== 'http:' && a.protocol !== 'https:') return bad('must be an http or https URL');
  if (a.origin !== b.origin) return bad('placeholders may appear in the path or query, not in the host or port');
  if (a.username || a.password) return bad('must not contain credentials; put them in a secret header');
  if (a.hash) return bad('must not contain a #fragment');
  const rawPath = withA.replace(/^[a-z]+:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0]!;
  if (rawPath.split('/').some((s) => DOT_SEGMENT.test(s))) return bad('must not contain "." or ".." path segments');
  return [];
}

/** An argument problem found while building the request; goes back to the model as a tool error. */
export class ArgumentError extends Error {}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** The request an action call makes, before user tokens and AnswerDesk's own headers are added. */
export interface PreparedRequest {
  method: ActionMethod;
  url: string;
  /** JSON text, or undefined when the request has no body. */
  body: string | undefined;
}

/**
 * Applies the argument mapping:
 * - `{name}` in the URL takes that argument, encoded with encodeURIComponent (a `/` stays inside
 *   its segment; a value that would form a `.`/`..` segment is refused);
 * - names listed in `query` go to the query string, names listed in `body` to the JSON body;
 * - every other argument goes to the query string for GET and DELETE, to the JSON body otherwise.
 * Query values: arrays repeat the key, objects are sent as JSON text, null is left out.
 */
export function prepareRequest(action: Pick<ActionDefinition, 'method' | 'url' | 'query' | 'body'>, args: Record<string, unknown>): PreparedRequest {
  const pathNames = new Set(urlPlaceholders(action.url));
  const filled = action.url.replace(PLACEHOLDER, (_, name: string) => {
    const value = args[name];
    if (value === undefined || value === null || value === '') throw new ArgumentError(`Missing value for "${name}"`);
    const encoded = encodeURIComponent(scalarText(value));
    if (DOT_SEGMENT.test(encoded)) throw new ArgumentError(`"${name}" cannot be "." or ".."`);
    return encoded;
  });
  const url = new URL(filled);
  // Adjacent placeholders ({a}{b}) could still join into a dot segment; check the result too.
  const rawPath = filled.replace(/^[a-z]+:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0]!;
  if (rawPath.split('/').some((s) => DOT_SEGMENT.test(s))) throw new ArgumentError('Arguments cannot form "." or ".." path segments');

  const queryNames = new Set(action.query ?? []);
  const bodyNames = new Set(action.body ?? []);
  const defaultToQuery = QUERY_METHODS.has(action.method);
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (pathNames.has(name) || value === undefined) continue;
    const toQuery = queryNames.has(name) || (!bodyNames.has(name) && defaultToQuery);
    if (!toQuery) {
      body[name] = value;
      continue;
    }
    if (value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== null && item !== undefined) url.searchParams.append(name, scalarText(item));
    }
  }
  const hasBody = Object.keys(body).length > 0 || (action.method !== 'GET' && action.method !== 'DELETE');
  return { method: action.method, url: url.href, body: hasBody ? JSON.stringify(body) : undefined };
}

/** Who the answer is for: the verified end user's id is the only identity an action ever sees. */
export interface CallIdentity {
  endUser: { externalId: string; verified: boolean } | null;
  /** The send-message request's userTokens (or the test run's); used for this call only. */
  userTokens: Record<string, string>;
}

/** Printable ASCII goes as is; anything else percent-encoded, so every id fits in a header. */
function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : encodeURIComponent(value);
}

/**
 * The headers of one call, lowest precedence first: AnswerDesk defaults, then the user tokens,
 * then the action's configured headers, then the verified user id. A user token cannot replace a
 * configured header, a reserved one (Host, framing, the user-id header) or the body's content type;
 * such tokens, and tokens with unsafe names or values, are dropped.
 */
export function composeHeaders(
  action: Pick<ActionDefinition, 'headers'>,
  prepared: PreparedRequest,
  identity: CallIdentity,
): Map<string, string> {
  const headers = new Map<string, string>();
  headers.set('accept', 'application/json, text/plain;q=0.9, */*;q=0.5');
  headers.set('user-agent', 'AnswerDesk-Actions/1');
  if (prepared.body !== undefined) headers.set('content-type', 'application/json');
  const configured = new Set(action.headers.map((h) => h.name.toLowerCase()));
  for (const [name, value] of Object.entries(identity.userTokens)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME_PATTERN.test(name) || !HEADER_VALUE_PATTERN.test(value)) continue;
    if (RESERVED_HEADERS.has(lower) || configured.has(lower) || lower === 'content-type') continue;
    headers.set(lower, value);
  }
  for (const h of action.headers) headers.set(h.name.toLowerCase(), h.value);
  if (identity.endUser?.verified) headers.set(USER_ID_HEADER, headerSafe(identity.endUser.externalId));
  return headers;
}

/**
 * Every value that must never be shown: secret header values and user-token values (see
 * SecretMasker for the forms they are looked for in).
 */
export function secretValues(action: Pick<ActionDefinition, 'headers'>, identity: CallIdentity): string[] {
  return [...action.headers.filter((h) => h.secret).map((h) => h.value), ...Object.values(identity.userTokens)];
}
