import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { ErrorDetail } from '../lib/errors.js';
import type { LocalEndpoints } from '../lib/local-endpoints.js';
import { clipText } from '../lib/nul.js';
import { safeFetch, SafeFetchError, type AddressPolicy, type SafeFetchErrorCode } from '../net/safe-fetch.js';
import type { Database } from '../store/index.js';
import { recordCall } from './calls.js';
import { SECRET_MASK, type ActionDefinition } from './definition.js';
import { checkArguments } from './json-schema.js';
import { SecretMasker } from './masking.js';
import { ArgumentError, composeHeaders, prepareRequest, secretValues, type CallIdentity } from './request.js';
import { decodeBody, maskBody, MAX_RESPONSE_BYTES, textForModel } from './response.js';

/** Characters of the response body a test run shows (the model gets its own, shorter cut). */
export const MAX_SHOWN_BODY_CHARS = 64 * 1024;

export type ActionErrorCode = 'invalid_arguments' | SafeFetchErrorCode;

export interface ExecuteOptions {
  config: Pick<Config, 'ANSWERDESK_ALLOW_PRIVATE_NETWORK'>;
  db: Kysely<Database>;
  identity: CallIdentity;
  source: 'agent' | 'test';
  conversationId?: string | null;
  signal?: AbortSignal;
  log?: FastifyBaseLogger;
  /** The id of the request that led to the call, sent as `X-Request-Id` (an action's configured header of that name wins; a user token of that name does not). */
  requestId?: string;
  /** Tests only (see SafeFetchInit.addressPolicy): lets one loopback test server through the guard. */
  addressPolicy?: AddressPolicy;
  /** This server's own endpoints the guard lets through (the demo's order look-up). */
  localEndpoints?: LocalEndpoints;
}

/** The request as made, with every secret value masked. */
export interface ShownRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

export interface ShownResponse {
  status: number;
  headers: Record<string, string>;
  contentType: string | null;
  /** Decoded body, secrets masked, at most MAX_SHOWN_BODY_CHARS characters. */
  body: string;
  /** The endpoint sent more than 1 MiB; only the first MiB was read. */
  truncated: boolean;
  /** Exactly what the model receives as the body. */
  forModel: string;
}

/**
 * The outcome of one action call. `ok` is true when the endpoint answered below 400. `error` is set
 * when no response came back (invalid arguments, refused address, timeout, network failure).
 */
export interface ActionCallResult {
  ok: boolean;
  error: { code: ActionErrorCode; message: string; details?: ErrorDetail[] } | null;
  request: ShownRequest | null;
  response: ShownResponse | null;
  latencyMs: number;
}

/** Messages safe for the call log, the model and an admin: no URL, no argument, no header value. */
function failureMessage(err: SafeFetchError, timeoutMs: number): string {
  switch (err.code) {
    case 'timeout':
      return `Timed out after ${timeoutMs} ms`;
    case 'blocked_address':
      return 'Refused: the endpoint (or a redirect) points to a private or reserved address';
    case 'dns_failure':
      return 'Could not resolve the endpoint host';
    case 'too_many_redirects':
      return 'Too many redirects';
    case 'unsupported_scheme':
      return 'Refused: a redirect led to a non-http(s) URL';
    case 'invalid_url':
      return 'Invalid URL';
    case 'aborted':
      return 'Cancelled';
    default: {
      const code = (err.cause as { code?: string } | undefined)?.code;
      return `Network error${code && /^[A-Z_]+$/.test(code) ? ` (${code})` : ''}`;
    }
  }
}

function headerPairs(headers: Headers): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  headers.forEach((value, name) => pairs.push([name, value]));
  return pairs;
}

function showHeaders(headers: Iterable<[string, string]>, masked: Set<string>, masker: SecretMasker): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = masked.has(name) ? SECRET_MASK : masker.maskText(value);
  return out;
}

/**
 * Makes one action call: validates the arguments against the action's JSON Schema (nothing is sent
 * when they do not match), builds the request, sends it through the SSRF guard with the action's
 * time budget and a 1 MiB cap, and records the call (time, outcome, status, latency, a safe error)
 * in the call log. User tokens and secret header values are sent but never returned, logged or
 * recorded: every text that leaves this function has them masked.
 */
export async function executeAction(action: ActionDefinition, args: unknown, options: ExecuteOptions): Promise<ActionCallResult> {
  const started = performance.now();
  const masker = new SecretMasker(secretValues(action, options.identity));
  const elapsed = () => Math.round(performance.now() - started);
  let result: ActionCallResult;

  const checked = checkArguments(action.parametersText, args);
  if (!checked.ok) {
    result = { ok: false, error: { code: 'invalid_arguments', message: 'Invalid arguments', details: checked.details }, request: null, response: null, latencyMs: elapsed() };
    await record(action, result, options);
    return result;
  }

  let prepared;
  try {
    prepared = prepareRequest(action, args as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof ArgumentError)) throw err;
    result = { ok: false, error: { code: 'invalid_arguments', message: `Invalid arguments: ${err.message}` }, request: null, response: null, latencyMs: elapsed() };
    await record(action, result, options);
    return result;
  }

  const headers = composeHeaders(action, prepared, options.identity);
  if (options.requestId && !action.headers.some((h) => h.name.toLowerCase() === 'x-request-id')) headers.set('x-request-id', options.requestId);
  const masked = new Set([
    ...action.headers.filter((h) => h.secret).map((h) => h.name.toLowerCase()),
    ...Object.keys(options.identity.userTokens).map((n) => n.toLowerCase()).filter((n) => headers.has(n)),
  ]);
  // A configured public header shares its name with no token (composeHeaders gave it precedence).
  for (const h of action.headers) if (!h.secret) masked.delete(h.name.toLowerCase());
  const request: ShownRequest = {
    method: prepared.method,
    url: masker.maskText(prepared.url),
    headers: showHeaders(headers, masked, masker),
    body: prepared.body === undefined ? null : masker.maskText(prepared.body),
  };

  try {
    const res = await safeFetch(prepared.url, {
      method: prepared.method,
      headers: Object.fromEntries(headers),
      body: prepared.body,
      timeoutMs: action.timeoutMs,
      maxBytes: MAX_RESPONSE_BYTES,
      allowPrivateNetwork: options.config.ANSWERDESK_ALLOW_PRIVATE_NETWORK,
      signal: options.signal,
      addressPolicy: options.addressPolicy,
      localEndpoints: options.localEndpoints,
      // Configured headers and user tokens are credentials for this endpoint's origin only.
      stripOnCrossOrigin: [...headers.keys()].filter((n) => !['accept', 'user-agent', 'content-type'].includes(n)),
    });
    const contentType = res.headers.get('content-type');
    const body = maskBody(decodeBody(res.body, contentType), contentType, masker);
    const text = body.text;
    const forModel = textForModel(body);
    result = {
      ok: res.status < 400,
      error: null,
      request,
      response: {
        status: res.status,
        headers: showHeaders(headerPairs(res.headers), new Set(['set-cookie']), masker),
        contentType,
        body: text.length > MAX_SHOWN_BODY_CHARS ? text.slice(0, MAX_SHOWN_BODY_CHARS) : text,
        truncated: res.truncated,
        forModel: forModel.text,
      },
      latencyMs: elapsed(),
    };
  } catch (err) {
    if (!(err instanceof SafeFetchError)) throw err;
    result = { ok: false, error: { code: err.code, message: failureMessage(err, action.timeoutMs) }, request, response: null, latencyMs: elapsed() };
  }
  await record(action, result, options);
  return result;
}

/** Appends the call to the action's log. A failed write is logged, never turned into a failed call. */
async function record(action: ActionDefinition, result: ActionCallResult, options: ExecuteOptions): Promise<void> {
  const status = result.response?.status ?? null;
  const error = result.error
    ? result.error.message + (result.error.details?.length ? `: ${result.error.details.map((d) => `${d.path || '(arguments)'} ${d.message}`).join('; ')}` : '')
    : status !== null && status >= 400
      ? `HTTP ${status}`
      : null;
  options.log?.info(
    { action: action.name, actionId: action.id, source: options.source, status, latencyMs: result.latencyMs, outcome: result.ok ? 'ok' : 'error' },
    'action call',
  );
  try {
    await recordCall(options.db, {
      project_id: action.projectId,
      action_id: action.id,
      conversation_id: options.conversationId ?? null,
      source: options.source,
      outcome: result.ok ? 'ok' : 'error',
      http_status: status,
      latency_ms: result.latencyMs,
      error: error ? clipText(error, 1000) : null,
    });
  } catch (err) {
    options.log?.warn({ err, actionId: action.id }, 'could not record the action call');
  }
}
