/** A non-2xx answer of the API, with the server's `error` string and, for 429, the wait in seconds. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly serverMessage: string,
    readonly retryAfter: number | null,
  ) {
    super(`${status} ${serverMessage}`);
  }
}

/** The request never got an HTTP answer (offline, DNS, CORS refusal, server down). */
export class NetworkError extends Error {}

export interface Identity {
  userId: string;
  /** Sent as `x-user-hmac` on every call once /identity/verify accepted it. */
  hmac: string | null;
}

/** Thin fetch wrapper for the runtime API: key and identity headers, JSON, and errors as ApiError. */
export class ApiClient {
  identity: Identity | null = null;
  private readonly base: string;

  constructor(
    apiUrl: string,
    private readonly apiKey: string,
  ) {
    this.base = apiUrl.replace(/\/+$/, '');
  }

  private headers(json: boolean): Record<string, string> {
    const headers: Record<string, string> = { 'x-api-key': this.apiKey };
    if (json) headers['content-type'] = 'application/json';
    if (this.identity?.hmac) headers['x-user-hmac'] = this.identity.hmac;
    return headers;
  }

  /** Sends a request; resolves with the Response when 2xx, otherwise throws ApiError / NetworkError. */
  async request(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal, extra?: Record<string, string>): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: { ...this.headers(body !== undefined), ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        // Anonymous visitors are told apart by what the widget stores, never by cookies.
        credentials: 'omit',
      });
    } catch (err) {
      if ((err as Error)?.name === 'AbortError') throw err;
      throw new NetworkError((err as Error)?.message ?? 'network error');
    }
    if (response.ok) return response;
    let message = '';
    try {
      const parsed = (await response.json()) as { error?: unknown };
      if (typeof parsed.error === 'string') message = parsed.error;
    } catch {
      // Not JSON (a proxy's error page): the status alone decides the wording.
    }
    const retry = Number(response.headers.get('retry-after'));
    throw new ApiError(response.status, message, Number.isFinite(retry) && retry > 0 ? retry : null);
  }

  async json<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.request(method, path, body, signal);
    return (await response.json()) as T;
  }
}

/** Turns any failure into words a visitor understands; the server's own text is used only where it is meant for people. */
export function describeError(err: unknown): string {
  if (err instanceof NetworkError) return "We couldn't reach the support service. Check your connection and try again.";
  if (err instanceof ApiError) {
    switch (err.status) {
      case 429:
        return err.retryAfter
          ? `You're sending messages faster than we can answer. Please wait ${err.retryAfter} second${err.retryAfter === 1 ? '' : 's'} and try again.`
          : "You're sending messages faster than we can answer. Please wait a moment and try again.";
      case 401:
        return err.serverMessage === 'Identity verification required'
          ? 'Please sign in again to continue this chat.'
          : "This chat isn't set up correctly (its key was refused). Please contact the site owner.";
      case 403:
        return err.serverMessage === 'Origin not allowed'
          ? "This chat isn't enabled for this website."
          : "This chat isn't set up correctly. Please contact the site owner.";
      case 404:
        return 'That conversation no longer exists.';
      case 409:
        return "We're still answering your previous message. Please wait a moment and try again.";
      case 413:
        return 'Your message is too long. Please shorten it and try again.';
      case 400:
        if (err.serverMessage === 'Conversation expired') return 'This conversation has ended. Start a new one to continue.';
        return "We couldn't send that message. Please rephrase it and try again.";
      default:
        return err.status >= 500
          ? 'Something went wrong on our side. Please try again in a moment.'
          : 'Something went wrong. Please try again.';
    }
  }
  return 'Something went wrong. Please try again.';
}
