import { setImmediate } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { Conflict, isNotFound, NotFound } from '../lib/errors.js';
import { base62, now } from '../lib/ids.js';
import { SafeFetchError, safeFetch, type AddressPolicy } from '../net/safe-fetch.js';
import type { Metrics } from '../lib/metrics.js';
import type { SecretSealer } from '../lib/secret-box.js';
import { isUnavailable } from '../store/faults.js';
import { isForeignKeyViolation } from '../store/index.js';
import type { Database } from '../store/schema.js';
import {
  claimDelivery,
  claimDue,
  failUnsent,
  getDelivery,
  markDelivered,
  markFailed,
  release,
  type AttemptOutcome,
  type ClaimedDelivery,
  type DeliveryWithType,
} from './deliveries.js';
import { getEndpoint, signingSecrets } from './endpoints.js';
import { TEST_EVENT_TYPE, insertEvent } from './events.js';
import { signedHeaders } from './signing.js';

/**
 * Delay before each attempt, the first included: the schedule Svix publishes for Standard Webhooks
 * (at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: about 28 hours in all). A delivery
 * whose last attempt fails is marked failed.
 */
export const DEFAULT_SCHEDULE_MS: readonly number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** Whole-attempt budget; the spec recommends 15 to 30 s. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** An endpoint whose every attempt failed for this long is turned off, with the reason. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/** Delivered and failed events are kept this long for the deliveries log, then pruned. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3_600_000;
/** A Retry-After longer than this is not honoured beyond it. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** Response bytes read: only the status matters, the body is dropped. */
const MAX_RESPONSE_BYTES = 4096;
const USER_AGENT = 'AnswerDesk-Webhooks/1.0';

/** What delivering needs: the database, the secret box and the SSRF rule. */
export interface WebhookDeps {
  db: Kysely<Database>;
  box: SecretSealer;
  /** ANSWERDESK_ALLOW_PRIVATE_NETWORK. */
  allowPrivateNetwork: boolean;
  /** Where attempts are counted (GET /metrics); absent: not counted. */
  metrics?: Pick<Metrics, 'webhookDelivery'>;
}

export interface DeliveryOptions {
  /** Delay before each attempt, the first included (tests shorten it). */
  scheduleMs?: readonly number[];
  timeoutMs?: number;
  disableAfterMs?: number;
  /** Tests only: see SafeFetchInit.addressPolicy. */
  addressPolicy?: AddressPolicy;
  log?: FastifyBaseLogger;
}

export interface WebhookWorkerOptions extends DeliveryOptions {
  /** How long a claim lasts; longer than an attempt can take, so a live attempt is never taken over. */
  leaseMs?: number;
  /** How often due deliveries are looked for. */
  pollMs?: number;
  /**
   * Attempts in flight at once on this node; one endpoint gets at most half of them, so one slow
   * endpoint does not hold up the others.
   */
  concurrency?: number;
  retentionMs?: number;
}

export interface WebhookWorker {
  /** Looks for due deliveries now instead of at the next poll. */
  wake(): void;
  /** Stops claiming; attempts in flight are cut short and given back as due. Resolves once they are. */
  stop(): Promise<void>;
}

type Resolved = Required<Omit<DeliveryOptions, 'addressPolicy' | 'log'>> & Pick<DeliveryOptions, 'addressPolicy' | 'log'>;

function resolve(options: DeliveryOptions): Resolved {
  return {
    scheduleMs: DEFAULT_SCHEDULE_MS,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    disableAfterMs: DEFAULT_DISABLE_AFTER_MS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as Resolved;
}

/** The first `code` (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…) along an error's causes. */
function causeCode(err: unknown): string | null {
  for (let e = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && !(e instanceof SafeFetchError)) return code;
  }
  return null;
}

/**
 * A short reason for a failed request, for the deliveries log and the server log. Never the URL:
 * a webhook URL may carry a token in its query.
 */
function reasonOf(err: unknown, timeoutMs: number): string {
  if (!(err instanceof SafeFetchError)) return 'Request failed';
  switch (err.code) {
    case 'too_many_redirects':
      return 'Redirect not followed: point the webhook at the final URL';
    case 'timeout':
      return `No response within ${timeoutMs} ms`;
    case 'network_error':
      return `Connection failed (${causeCode(err) ?? 'network error'})`;
    default:
      // Host-only messages: refused address, unresolvable host, scheme.
      return err.message.slice(0, 300);
  }
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), or 0. */
function retryAfterMs(value: string | null): number {
  if (!value) return 0;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : 0;
}

/** The delay after failed attempt `n` (1-based), with ±10 % jitter so retries of one outage spread out. */
function nextDelay(schedule: readonly number[], attempts: number): number | null {
  const base = schedule[attempts];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + Math.random() * 0.2));
}

class SecretUnreadable extends Error {
  constructor() {
    super('The signing secret cannot be decrypted on this node (is ANSWERDESK_SECRET_KEY the same on every node?)');
  }
}

/**
 * Makes one attempt of a claimed delivery: signs the stored body with the endpoint's secret(s),
 * POSTs it through the SSRF guard with a time budget and no redirects, and records the outcome.
 * 2xx is success; anything else, a timeout or a refused address is a failure, retried on the
 * schedule; 410 Gone turns the endpoint off (the receiver asked to stop).
 */
export async function attemptDelivery(
  deps: WebhookDeps,
  claimed: ClaimedDelivery,
  owner: string,
  opts: Resolved,
  signal?: AbortSignal,
): Promise<void> {
  const { db } = deps;
  const ids = { deliveryId: claimed.delivery.id, webhookId: claimed.endpoint.id, attempt: claimed.delivery.attempts };
  if (!claimed.endpoint.enabled) {
    await failUnsent(db, claimed, owner, 'Webhook disabled');
    deps.metrics?.webhookDelivery(claimed.eventType, 'dropped', null);
    return;
  }
  const started = performance.now();
  const at = now();
  let outcome: AttemptOutcome;
  let wait = 0;
  let secrets: string[];
  try {
    secrets = signingSecrets(deps.box, claimed.endpoint, at);
  } catch {
    // Sealed under another ANSWERDESK_SECRET_KEY: retried on the schedule, so a node started with
    // the wrong key does not lose the delivery once the key is fixed.
    secrets = [];
  }
  try {
    if (secrets.length === 0) throw new SecretUnreadable();
    const res = await safeFetch(claimed.endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signedHeaders(secrets, claimed.eventId, Math.floor(Date.now() / 1000), claimed.payload),
      },
      body: claimed.payload,
      timeoutMs: opts.timeoutMs,
      maxBytes: MAX_RESPONSE_BYTES,
      maxRedirects: 0,
      allowPrivateNetwork: deps.allowPrivateNetwork,
      addressPolicy: opts.addressPolicy,
      signal,
    });
    const ok = res.status >= 200 && res.status < 300;
    outcome = { ok, responseStatus: res.status, durationMs: Math.round(performance.now() - started), error: ok ? null : `HTTP ${res.status}`, at };
    if (!ok) wait = retryAfterMs(res.headers.get('retry-after'));
  } catch (err) {
    if (signal?.aborted) {
      await release(db, claimed, owner);
      return;
    }
    const error = err instanceof SecretUnreadable ? err.message : reasonOf(err, opts.timeoutMs);
    outcome = { ok: false, responseStatus: null, durationMs: Math.round(performance.now() - started), error, at };
  }

  const seconds = (performance.now() - started) / 1000;
  if (outcome.ok) {
    await markDelivered(db, claimed, owner, outcome);
    deps.metrics?.webhookDelivery(claimed.eventType, 'success', seconds);
    return;
  }
  const gone = outcome.responseStatus === 410;
  const delay = gone ? null : nextDelay(opts.scheduleMs, claimed.delivery.attempts);
  const nextAttemptAt = delay === null ? null : new Date(Date.now() + Math.max(delay, wait)).toISOString();
  const result = await markFailed(db, claimed, owner, outcome, {
    nextAttemptAt,
    disableAfterMs: opts.disableAfterMs,
    ...(gone ? { disableNow: 'The endpoint answered 410 Gone' } : {}),
  });
  const retried = nextAttemptAt !== null && !result.disabled;
  deps.metrics?.webhookDelivery(claimed.eventType, retried ? 'retry' : 'failed', seconds);
  opts.log?.warn({ ...ids, status: outcome.responseStatus, reason: outcome.error, nextAttemptAt: retried ? nextAttemptAt : null }, 'webhook delivery failed');
  if (result.disabled) opts.log?.warn({ webhookId: claimed.endpoint.id, reason: result.disabled }, 'webhook disabled');
}

/**
 * Sends a `webhook.test` event to one endpoint now and returns its delivery as it stands after the
 * attempt (`delivered`, or `pending` with the next attempt's time). It is an ordinary delivery:
 * logged, retried on failure.
 */
export async function sendTestEvent(deps: WebhookDeps, projectId: string, endpointId: string, options: DeliveryOptions = {}): Promise<DeliveryWithType> {
  const endpoint = await getEndpoint(deps.db, projectId, endpointId);
  if (!endpoint.enabled) throw Conflict('Webhook is disabled');
  // The endpoint deleted since it was read: its delivery's foreign key fails (and the event goes
  // with the transaction), or the delete's cascade takes the delivery before it is read back. Either
  // way the answer is the one the same request gets a moment later.
  const gone = (err: unknown) => (isForeignKeyViolation(err) || isNotFound(err) ? NotFound('Webhook not found') : err);
  const { deliveryIds } = await deps.db
    .transaction()
    .execute((trx) => insertEvent(trx, projectId, TEST_EVENT_TYPE, { webhookId: endpoint.id, message: 'A test event sent from AnswerDesk.' }, [endpoint.id]))
    .catch((err: unknown) => {
      throw gone(err);
    });
  const deliveryId = deliveryIds[0]!;
  const opts = resolve(options);
  const owner = `send_${base62(12)}`;
  // A worker may have claimed it first; then it is in flight there.
  const claimed = await claimDelivery(deps.db, deliveryId, owner, opts.timeoutMs + 30_000);
  if (claimed) await attemptDelivery(deps, claimed, owner, opts);
  return getDelivery(deps.db, endpoint.id, deliveryId).catch((err: unknown) => {
    throw gone(err);
  });
}

/** Deletes events older than `retentionMs` that have nothing left to send (their deliveries go with them). */
export async function pruneEvents(db: Kysely<Database>, retentionMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - retentionMs).toISOString();
  const res = await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select(sql.lit(1).as('one'))
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id')
            .where('webhook_deliveries.status', 'in', ['pending', 'sending']),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

const PRUNE_EVERY_MS = 3_600_000;

/**
 * Starts this node's delivery worker. Every node runs one against the shared database: deliveries
 * are claimed under a lease, so none is sent by two workers at once, and one whose node died
 * mid-attempt is sent again once its lease runs out. Answers never wait on it: events are rows,
 * sent from here.
 */
export function startWebhookWorker(deps: WebhookDeps, options: WebhookWorkerOptions = {}): WebhookWorker {
  const opts = resolve(options);
  const leaseMs = options.leaseMs ?? opts.timeoutMs + 30_000;
  const pollMs = options.pollMs ?? 1_000;
  const concurrency = options.concurrency ?? 8;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const owner = `hooks_${base62(12)}`;
  const stopping = new AbortController();
  const inflight = new Set<Promise<void>>();
  let running = true;
  let databaseDown = false;
  let pending = false;
  let wakeUp: (() => void) | null = null;
  let prunedAt = 0;
  const wake = () => {
    pending = true;
    wakeUp?.();
  };

  // Attempts in flight per endpoint on this node: one endpoint gets at most half the slots.
  const busy = new Map<string, number>();
  const perEndpoint = Math.max(1, Math.floor(concurrency / 2));
  const run = (claimed: ClaimedDelivery) => {
    const endpointId = claimed.endpoint.id;
    busy.set(endpointId, (busy.get(endpointId) ?? 0) + 1);
    const task = attemptDelivery(deps, claimed, owner, opts, stopping.signal)
      .catch((err: unknown) => {
        // Not recorded (the database went away): the lease runs out and the delivery is sent again.
        if (isUnavailable(err)) opts.log?.warn({ deliveryId: claimed.delivery.id, err: { message: (err as Error).message } }, 'webhook outcome not recorded: database unavailable');
        else opts.log?.error({ err, deliveryId: claimed.delivery.id }, 'webhook delivery error');
      })
      .finally(() => {
        inflight.delete(task);
        const left = busy.get(endpointId)! - 1;
        if (left > 0) busy.set(endpointId, left);
        else busy.delete(endpointId);
        wake();
      });
    inflight.add(task);
  };

  const loop = (async () => {
    while (running) {
      pending = false;
      await setImmediate();
      try {
        const free = concurrency - inflight.size;
        if (free > 0) {
          const claimed = await claimDue(deps.db, owner, leaseMs, free, { perEndpoint, busy });
          databaseDown = false;
          if (!running) {
            for (const c of claimed) await release(deps.db, c, owner);
            break;
          }
          claimed.forEach(run);
          if (claimed.length === free) continue;
        }
        if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneEvents(deps.db, retentionMs);
        }
      } catch (err) {
        if (!running) break;
        if (!isUnavailable(err)) opts.log?.error({ err }, 'webhook worker error');
        else if (!databaseDown) opts.log?.warn({ err: { message: (err as Error).message } }, 'webhook worker waits for the database');
        databaseDown = isUnavailable(err);
      }
      if (!running || pending) continue;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          done();
        };
      });
      wakeUp = null;
    }
  })();

  return {
    wake,
    async stop() {
      running = false;
      stopping.abort();
      wakeUp?.();
      await loop;
      await Promise.all([...inflight]);
    },
  };
}
