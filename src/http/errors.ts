import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { HttpError, type ErrorDetail } from '../lib/errors.js';

/**
 * The one place errors become responses: `{error}` for everything, `details` for validation,
 * `verified: false` on the identity routes, and no internals on a 5xx.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    send(request, reply, new HttpError(404, 'Not found'));
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    send(request, reply, toHttpError(err, request));
  });
}

function send(request: FastifyRequest, reply: FastifyReply, err: HttpError): void {
  const body: Record<string, unknown> = { error: err.message, ...err.extra };
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
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) {
    return new HttpError(400, 'Validation error', { details: [{ path: '', message: 'Body is not valid JSON' }] });
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new HttpError(fe.statusCode, fe.statusCode === 404 ? 'Not found' : 'Bad request');
  }
  request.log.error({ err }, 'unhandled error');
  return new HttpError(500, 'Internal server error');
}
