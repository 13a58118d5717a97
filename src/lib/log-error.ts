/** Characters of an error message a log line keeps. */
const MAX_MESSAGE = 500;
/** Nested causes and aggregated errors followed at most this deep. */
const MAX_DEPTH = 3;

/**
 * AI SDK errors whose message quotes what they failed on: a model's output, a tool's input, a
 * prompt. Their name and fields say what happened; the message itself is left out.
 */
const CONTENT_IN_MESSAGE = new Set([
  'AI_JSONParseError',
  'AI_TypeValidationError',
  'AI_InvalidResponseDataError',
  'AI_InvalidToolInputError',
  'AI_InvalidPromptError',
  'AI_NoObjectGeneratedError',
  'AI_MessageConversionError',
]);

/** A URL without credentials, query or fragment (providers such as Gemini or Azure put keys in the query). */
export function urlForLog(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}`;
  } catch {
    return '[invalid url]';
  }
}

const size = (value: unknown): number | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return Buffer.byteLength(value);
  try {
    return Buffer.byteLength(JSON.stringify(value));
  } catch {
    return undefined;
  }
};

const short = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);

/**
 * The `err` serializer of every log line: what went wrong, not what it was about. An error is
 * logged by an allow-list of fields: type, message, stack frames, codes and statuses, the request
 * URL without its query, and the sizes of request and response bodies; never the body sent to a
 * model provider (an AI SDK `APICallError` carries it in `requestBodyValues`: the conversation, a
 * verified e-mail, page text), the provider's response body (which may echo it) or headers, nor the
 * fields other errors carry their input in. Causes and aggregated errors (a `RetryError`'s
 * attempts) are serialized the same way.
 */
export function serializeError(err: unknown, depth = 0): unknown {
  if (err === null || typeof err !== 'object') return err;
  const e = err as Record<string, unknown> & { name?: unknown; message?: unknown; stack?: unknown };
  const type = typeof e.name === 'string' && e.name !== 'Error' ? e.name : (err.constructor?.name ?? 'Error');
  const message = CONTENT_IN_MESSAGE.has(type) ? '(message left out: it quotes conversation content)' : short(String(e.message ?? ''));
  const frames = typeof e.stack === 'string' ? e.stack.split('\n').filter((line) => /^\s+at /.test(line)) : [];
  const out: Record<string, unknown> = { type, message };
  if (frames.length) out.stack = [`${type}: ${message}`, ...frames].join('\n');
  for (const key of ['code', 'statusCode', 'status', 'isRetryable', 'reason', 'errno', 'syscall', 'constraint', 'table', 'column'] as const) {
    const value = e[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  const url = urlForLog(e.url);
  if (url) out.url = url;
  const requestBytes = size(e.requestBodyValues);
  if (requestBytes !== undefined) out.requestBodyBytes = requestBytes;
  const responseBytes = size(e.responseBody);
  if (responseBytes !== undefined) out.responseBodyBytes = responseBytes;
  if (depth < MAX_DEPTH) {
    if (e.cause !== undefined) out.cause = serializeError(e.cause, depth + 1);
    if (Array.isArray(e.errors)) out.errors = e.errors.slice(0, 5).map((x) => serializeError(x, depth + 1));
  }
  return out;
}
