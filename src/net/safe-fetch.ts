import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { allowAnyAddress, isPublicAddress, type AddressPolicy } from './address-policy.js';

export { isPublicAddress, type AddressPolicy } from './address-policy.js';

/** Why a guarded fetch did not produce a response. */
export type SafeFetchErrorCode =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'blocked_address'
  | 'dns_failure'
  | 'too_many_redirects'
  | 'timeout'
  | 'aborted'
  | 'network_error';

/** A refused or failed guarded fetch; `code` says why, the message is safe to show an admin. */
export class SafeFetchError extends Error {
  constructor(
    readonly code: SafeFetchErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SafeFetchError';
  }
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string> | Headers;
  body?: string | Buffer | Uint8Array;
  /** Whole-request budget across every redirect hop, body included. */
  timeoutMs: number;
  /** At most this many body bytes are read; the rest is dropped and `truncated` is set. */
  maxBytes: number;
  /** Redirects followed (each re-checked); default 5. */
  maxRedirects?: number;
  /** ANSWERDESK_ALLOW_PRIVATE_NETWORK: lets the request reach private and loopback addresses. */
  allowPrivateNetwork: boolean;
  signal?: AbortSignal;
  /**
   * Replaces the built-in address rule when `allowPrivateNetwork` is false. Only tests set it (to
   * let a loopback test server through while every other private address stays refused);
   * application code never does.
   */
  addressPolicy?: AddressPolicy;
  /**
   * More header names (besides Authorization and Cookie) that must not follow a redirect to another
   * origin: an action's configured headers and the end user's tokens are credentials for one host.
   */
  stripOnCrossOrigin?: readonly string[];
  /**
   * This server's own endpoints that may be reached on a loopback address (the demo's order
   * look-up, see lib/local-endpoints.ts). Checked per hop, so a redirect away from one is guarded
   * again.
   */
  localEndpoints?: { allows(url: URL): boolean };
}

export interface SafeResponse {
  status: number;
  headers: Headers;
  /** The final URL after redirects. */
  url: string;
  body: Buffer;
  truncated: boolean;
  /** Every URL redirected to, in order. */
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A `lookup` for the socket: resolves every address and refuses the connection when any of them
 * is not allowed. Because the check runs inside the connect call itself, a DNS answer that changes
 * between a check and the connect (rebinding) cannot slip a private address through.
 */
function guardedLookup(policy: AddressPolicy) {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => !policy(a.address));
      if (bad || list.length === 0) {
        const refused = new SafeFetchError('blocked_address', `Refused to connect to ${hostname}: address not allowed`);
        return callback(refused as NodeJS.ErrnoException, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

const agents = new Map<AddressPolicy, Agent>();

/** One connection pool per policy, so keep-alive sockets are reused across calls. */
function agentFor(policy: AddressPolicy): Agent {
  let agent = agents.get(policy);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(policy) as never } });
    agents.set(policy, agent);
  }
  return agent;
}

/** Checks a hop before any connection: scheme, and the address for IP-literal hosts (no lookup runs for those). */
async function checkTarget(url: URL, policy: AddressPolicy): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError('unsupported_scheme', `Only http and https URLs can be fetched, not ${url.protocol}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (!policy(host)) throw new SafeFetchError('blocked_address', `Refused to connect to ${host}: address not allowed`);
    return;
  }
  // A pre-flight resolution gives a clear error early; the connect-time lookup is what enforces it.
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, list) =>
      err ? reject(new SafeFetchError('dns_failure', `Could not resolve ${host}`, { cause: err })) : resolve(list),
    ),
  );
  if (addresses.some((a) => !policy(a.address))) {
    throw new SafeFetchError('blocked_address', `Refused to connect to ${host}: address not allowed`);
  }
}

function findSafeFetchError(err: unknown): SafeFetchError | null {
  for (let e = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SafeFetchError) return e;
  }
  return null;
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    if (size + buf.length > maxBytes) {
      chunks.push(buf.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      break; // leaving the loop destroys the stream, so the rest is never downloaded
    }
    chunks.push(buf);
    size += buf.length;
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

function toHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/**
 * Fetches a URL from the server side without letting it reach the server's own network: http(s)
 * only, every resolved address checked at connect time, every redirect re-checked, a time budget
 * and a byte cap. Used by URL ingestion and by action calls.
 */
export async function safeFetch(url: string | URL, init: SafeFetchInit): Promise<SafeResponse> {
  const policy = init.allowPrivateNetwork ? allowAnyAddress : (init.addressPolicy ?? isPublicAddress);
  const maxRedirects = init.maxRedirects ?? 5;
  const timeout = AbortSignal.timeout(init.timeoutMs);
  const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
  let current: URL;
  try {
    current = new URL(url);
  } catch (err) {
    throw new SafeFetchError('invalid_url', 'Invalid URL', { cause: err });
  }
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  let headers: Record<string, string> = {};
  new Headers(init.headers ?? {}).forEach((value, name) => {
    headers[name] = value;
  });
  const redirects: string[] = [];

  try {
    for (;;) {
      const hopPolicy = init.localEndpoints?.allows(current) ? allowAnyAddress : policy;
      await checkTarget(current, hopPolicy);
      signal.throwIfAborted();
      const res = await request(current, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        signal,
        dispatcher: agentFor(hopPolicy),
      });
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
        // Drain a little (keeps the socket reusable) then drop; a redirect body is never needed.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        if (redirects.length >= maxRedirects) {
          throw new SafeFetchError('too_many_redirects', `More than ${maxRedirects} redirects`);
        }
        const next = new URL(location, current);
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
        }
        if (next.origin !== current.origin) {
          // Credentials meant for one host must not follow a redirect to another.
          const strip = new Set((init.stripOnCrossOrigin ?? []).map((n) => n.toLowerCase()));
          headers = Object.fromEntries(
            Object.entries(headers).filter(([k]) => !/^(authorization|cookie)$/i.test(k) && !strip.has(k.toLowerCase())),
          );
        }
        redirects.push(next.href);
        current = next;
        continue;
      }
      const read = await readCapped(res.body, init.maxBytes);
      return {
        status: res.statusCode,
        headers: toHeaders(res.headers),
        url: current.href,
        body: read.body,
        truncated: read.truncated,
        redirects,
      };
    }
  } catch (err) {
    const known = findSafeFetchError(err);
    if (known) throw known;
    if (timeout.aborted) throw new SafeFetchError('timeout', `No complete response within ${init.timeoutMs} ms`, { cause: err });
    if (signal.aborted) throw new SafeFetchError('aborted', 'Request aborted', { cause: err });
    throw new SafeFetchError('network_error', `Could not fetch ${current.href}: ${(err as Error).message}`, { cause: err });
  }
}
