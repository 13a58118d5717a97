import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { HttpError, ServiceUnavailable, type ErrorDetail } from '../lib/errors.js';
import { isUnavailable } from '../store/faults.js';
import { methodIndex } from './allowed-methods.js';

/**
 * The one place errors become responses: `{error}` for everything, `details` for validation,
 * `verified: false` on the identity routes, 503 `{"error":"Service unavailable"}` with Retry-After
 * when the database cannot be reached, and no internals on a 5xx.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  const methodsOf = methodIndex(app);
  // Reached after the auth hook treated the request as an unknown path (401 without a key inside
  // the API, rate-limit headers), so a 405 reveals no more than a 404 would.
  app.setNotFoundHandler((request, reply) => {
    const allowed = methodsOf(request.url);
    if (allowed.length) send(request, reply, new HttpError(405, 'Method not allowed', {}, { allow: allowed.join(', ') }));
    else send(request, reply, new HttpError(404, 'Not found'));
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    send(request, reply, toHttpError(err, request));
  });
}

/**
 * Fastify's `frameworkErrors`: a path the router cannot read (a broken percent-escape, a parameter
 * over the length limit) names no route, so it is answered as an unknown path is: the key check
 * first (401 and rate-limit headers inside the API), then 404, instead of Fastify's own 400 body.
 */
export async function answerUnroutable(err: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // No onRequest hook runs for these requests: set what they would have.
  reply.header('x-request-id', request.id);
  try {
    if (err.code !== 'FST_ERR_BAD_URL' && err.code !== 'FST_ERR_MAX_PARAM_LENGTH') throw err;
    await request.server.authenticate(request, reply);
    throw new HttpError(404, 'Not found');
  } catch (caught) {
    send(request, reply, toHttpError(caught as Error, request));
  }
}

/**
 * Most problems a validation error lists. A body of a thousand invalid parts each named would make
 * a response many times its size (a 1 MiB send of 95,000 bad parts answered 9 MB); the first
 * hundred say what is wrong, and a last entry how many more there were.
 */
export const MAX_ERROR_DETAILS = 100;

function send(request: FastifyRequest, reply: FastifyReply, err: HttpError): void {
  const body: Record<string, unknown> = { error: err.message, ...err.extra };
  const details = body.details as ErrorDetail[] | undefined;
  if (Array.isArray(details) && details.length > MAX_ERROR_DETAILS) {
    body.details = [...details.slice(0, MAX_ERROR_DETAILS), { path: '', message: `and ${details.length - MAX_ERROR_DETAILS} more problems` }];
  }
  // The identity routes answer a bad body as {verified:false,error} (their own failures carry
  // verified:false already); auth, rate-limit and server errors keep the plain {error} shape.
  if (request.routeOptions.config?.identityErrors && err.statusCode === 400) {
    body.verified = false;
    delete body.details;
  }
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  reply.code(err.statusCode).type('application/json; charset=utf-8').send(JSON.stringify(orderBody(body)));
}

/** `verified` first, as in the spec's examples; the rest as built. */
function orderBody(body: Record<string, unknown>): Record<string, unknown> {
  if (!('verified' in body)) return body;
  const { verified, ...rest } = body;
  return { verified, ...rest };
}

export function toHttpError(err: FastifyError | Error, request: FastifyRequest): HttpError {
  if (err instanceof HttpError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const details: ErrorDetail[] = err.validation.map((v) => ({
      path: [v.instancePath.replace(/^\//, '').replace(/\//g, '.')].filter(Boolean).join('.') || (err.validationContext ?? ''),
      message: v.message ?? 'Invalid value',
    }));
    return new HttpError(400, 'Validation error', { details });
  }
  if (err instanceof ZodError) {
    return new HttpError(400, 'Validation error', {
      details: err.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, 'Request body too large');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError(400, 'Validation error', { details: [{ path: '', message: 'Body is not valid JSON' }] });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(415, 'Unsupported media type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpError(400, 'Invalid content length');
    // @fastify/multipart's limits (knowledge file upload): say which one was hit.
    case 'FST_REQ_FILE_TOO_LARGE':
      return new HttpError(413, 'File too large');
    case 'FST_FILES_LIMIT':
      return new HttpError(413, 'Too many files');
    case 'FST_FIELDS_LIMIT':
      return new HttpError(413, 'Too many fields');
    case 'FST_PARTS_LIMIT':
      return new HttpError(413, 'Too many parts');
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) {
    return new HttpError(400, 'Validation error', { details: [{ path: '', message: 'Body is not valid JSON' }] });
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const message = fe.statusCode === 404 ? 'Not found' : fe.statusCode === 413 ? 'Request body too large' : 'Bad request';
    return new HttpError(fe.statusCode, message);
  }
  if (isUnavailable(err)) {
    // The database is unreachable, cut off, overloaded or timed out: not this request's fault, and
    // likely to pass. Logged without the stack, once per request.
    request.log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, 'database unavailable');
    return ServiceUnavailable();
  }
  request.log.error({ err }, 'unhandled error');
  return new HttpError(500, 'Internal server error');
}
