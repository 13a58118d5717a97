/** One detail of a validation error: where and what. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * An error that maps to one HTTP status and the public `{error}` body. Route and service code throws
 * these; the one error handler turns them into responses.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A 404 a service threw: the row it looked for is not there (often: deleted since the route read it). */
export function isNotFound(err: unknown): err is HttpError {
  return err instanceof HttpError && err.statusCode === 404;
}

export const BadRequest = (message: string, extra?: Record<string, unknown>) =>
  new HttpError(400, message, extra);
export const ValidationError = (details: ErrorDetail[]) =>
  new HttpError(400, 'Validation error', { details });
export const Unauthorized = (message = 'Unauthorized') => new HttpError(401, message);
export const Forbidden = (message: string) => new HttpError(403, message);
export const NotFound = (message: string) => new HttpError(404, message);
export const Conflict = (message: string) => new HttpError(409, message);
export const TooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'Rate limit exceeded', {}, { 'retry-after': String(retryAfterSeconds) });

/** Seconds a client is asked to wait after a 503: a database failover or a restart takes about this. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: a dependency is down or the node is at capacity or shutting down; try again soon. */
export const ServiceUnavailable = (message = 'Service unavailable', retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS) =>
  new HttpError(503, message, {}, { 'retry-after': String(retryAfterSeconds) });
