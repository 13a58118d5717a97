import { sql, type Kysely, type Selectable } from 'kysely';
import { Conflict, NotFound } from '../lib/errors.js';
import { now } from '../lib/ids.js';
import { keysetPage, readCursor } from '../store/keyset.js';
import type { Database, WebhookDeliveriesTable } from '../store/schema.js';

type Db = Kysely<Database>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
/** A delivery with the type of its event, as the admin API lists it. */
export type DeliveryWithType = DeliveryRow & { event_type: string };

function withType(db: Db) {
  return db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id').selectAll('d').select('e.type as event_type');
}

/** One page of an endpoint's deliveries, newest first; `status` filters. */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  page: { limit: number; cursor?: string; status?: DeliveryRow['status'] },
): Promise<{ rows: DeliveryWithType[]; nextCursor?: string }> {
  const after = readCursor(page.cursor);
  let q = withType(db).where('d.endpoint_id', '=', endpointId);
  if (page.status) q = q.where('d.status', '=', page.status);
  return keysetPage(q, { time: 'd.created_at', id: 'd.id' }, (r) => ({ time: r.created_at, id: r.id }), { limit: page.limit, after });
}

/** The delivery of this endpoint, or 404 `Delivery not found`. */
export async function getDelivery(db: Db, endpointId: string, deliveryId: string): Promise<DeliveryWithType> {
  const row = await withType(db).where('d.id', '=', deliveryId).where('d.endpoint_id', '=', endpointId).executeTakeFirst();
  if (!row) throw NotFound('Delivery not found');
  return row;
}

/**
 * Sends a delivery again, whatever became of it: it is due now and its retry schedule starts over.
 * One in flight is left alone (409), so a retry never races its own attempt.
 */
export async function retryDelivery(db: Db, endpointId: string, deliveryId: string): Promise<DeliveryWithType> {
  await getDelivery(db, endpointId, deliveryId);
  const at = now();
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: at, lease_owner: null, lease_until: null, delivered_at: null, updated_at: at })
    .where('id', '=', deliveryId)
    .where('status', '!=', 'sending')
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) {
    // Gone since it was read (its endpoint deleted): 404, as a moment later; else it is in flight.
    await getDelivery(db, endpointId, deliveryId);
    throw Conflict('Delivery is being sent');
  }
  return getDelivery(db, endpointId, deliveryId);
}

const claimable = (at: string) =>
  sql<boolean>`((status = 'pending' and next_attempt_at <= ${at}) or (status = 'sending' and lease_until < ${at}))`;

/** A claimed delivery with what its attempt needs: the event's body and the endpoint's URL and secrets. */
export interface ClaimedDelivery {
  delivery: DeliveryRow;
  eventId: string;
  /** The event's type (`message.created`…): the only label of the delivery metrics. */
  eventType: string;
  payload: string;
  endpoint: {
    id: string;
    url: string;
    enabled: boolean;
    secret: string;
    previous_secret: string | null;
    previous_secret_until: string | null;
  };
}

async function claimById(db: Db, id: string, owner: string, leaseMs: number, at: string): Promise<ClaimedDelivery | null> {
  const delivery = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'sending',
      lease_owner: owner,
      lease_until: new Date(Date.parse(at) + leaseMs).toISOString(),
      attempts: sql`attempts + 1`,
      updated_at: at,
    })
    .where('id', '=', id)
    .where(claimable(at))
    .returningAll()
    .executeTakeFirst();
  if (!delivery) return null;
  const event = await db.selectFrom('webhook_events').select(['id', 'type', 'payload']).where('id', '=', delivery.event_id).executeTakeFirst();
  const endpoint = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'enabled', 'secret', 'previous_secret', 'previous_secret_until'])
    .where('id', '=', delivery.endpoint_id)
    .executeTakeFirst();
  // Deleted meanwhile: the cascade removes the delivery too.
  if (!event || !endpoint) return null;
  return { delivery, eventId: event.id, eventType: event.type, payload: event.payload, endpoint: { ...endpoint, enabled: endpoint.enabled === 1 } };
}

/**
 * Claims up to `limit` due deliveries: pending ones whose time has come, and ones in flight on a
 * node whose lease ran out (it died mid-send). Each claim is a conditional UPDATE that re-checks
 * the condition on the row, so when workers race for a delivery exactly one wins it.
 *
 * Endpoints take turns: every endpoint's first due delivery comes before any endpoint's second,
 * and no endpoint gets more than `perEndpoint` attempts in flight on this node (`busy` counts
 * those it has already). One endpoint with a backlog, or one that answers slowly, thus never takes
 * every slot while deliveries to the others wait.
 */
export async function claimDue(
  db: Db,
  owner: string,
  leaseMs: number,
  limit: number,
  share: { perEndpoint: number; busy: ReadonlyMap<string, number> } = { perEndpoint: limit, busy: new Map() },
): Promise<ClaimedDelivery[]> {
  const at = now();
  const candidates = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select(['id', 'endpoint_id', 'next_attempt_at', sql<number>`row_number() over (partition by endpoint_id order by next_attempt_at, id)`.as('turn')])
        .where(claimable(at))
        .as('due'),
    )
    .select(['id', 'endpoint_id'])
    .where('turn', '<=', share.perEndpoint)
    .orderBy('turn')
    .orderBy('next_attempt_at')
    .limit(limit * 2)
    .execute();
  const claimed: ClaimedDelivery[] = [];
  const taken = new Map(share.busy);
  for (const { id, endpoint_id } of candidates) {
    if (claimed.length >= limit) break;
    if ((taken.get(endpoint_id) ?? 0) >= share.perEndpoint) continue;
    const one = await claimById(db, id, owner, leaseMs, at);
    if (!one) continue;
    claimed.push(one);
    taken.set(endpoint_id, (taken.get(endpoint_id) ?? 0) + 1);
  }
  return claimed;
}

/** Deliveries not settled yet (pending or being sent), every project and node: one count on the `status` index. */
export async function unsettledDeliveryCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Claims this one delivery if it is due (a test event sent at once). */
export async function claimDelivery(db: Db, id: string, owner: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  return claimById(db, id, owner, leaseMs, now());
}

/** What one attempt came to. */
export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  at: string;
}

/** Records a successful attempt; false when the lease was lost (another worker owns the delivery now). */
export async function markDelivered(db: Db, claimed: ClaimedDelivery, owner: string, outcome: AttemptOutcome): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'delivered',
        next_attempt_at: null,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: outcome.at,
        response_status: outcome.responseStatus,
        duration_ms: outcome.durationMs,
        error: null,
        delivered_at: outcome.at,
        updated_at: outcome.at,
      })
      .where('id', '=', claimed.delivery.id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', claimed.endpoint.id).where('failing_since', 'is not', null).execute();
    return true;
  });
}

/**
 * Records a failed attempt: due again at `nextAttemptAt`, or failed for good when that is null.
 * The endpoint's run of failures starts at its first failure after a success; `disable` (a reason)
 * turns the endpoint off and fails its other pending deliveries, which a retry can send again once
 * it is turned back on.
 */
export async function markFailed(
  db: Db,
  claimed: ClaimedDelivery,
  owner: string,
  outcome: AttemptOutcome,
  next: { nextAttemptAt: string | null; disableAfterMs: number; disableNow?: string },
): Promise<{ recorded: boolean; disabled: string | null }> {
  return db.transaction().execute(async (trx) => {
    // Turned off while this attempt was in flight: no attempt follows.
    const current = await trx.selectFrom('webhook_endpoints').select('enabled').where('id', '=', claimed.endpoint.id).executeTakeFirst();
    const nextAttemptAt = current?.enabled ? next.nextAttemptAt : null;
    const res = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: nextAttemptAt ? 'pending' : 'failed',
        next_attempt_at: nextAttemptAt,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: outcome.at,
        response_status: outcome.responseStatus,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        updated_at: outcome.at,
      })
      .where('id', '=', claimed.delivery.id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return { recorded: false, disabled: null };
    // The run of failures starts at the first failure after a success, or after a quiet spell: a
    // failure more than QUIET_MS after the previous one says nothing of the time between them.
    const quietBefore = new Date(Date.parse(outcome.at) - QUIET_MS).toISOString();
    await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failing_since: eb
          .case()
          .when(eb.or([eb('failing_since', 'is', null), eb('last_failed_at', 'is', null), eb('last_failed_at', '<', quietBefore)]))
          .then(outcome.at)
          .else(eb.ref('failing_since'))
          .end(),
        last_failed_at: outcome.at,
      }))
      .where('id', '=', claimed.endpoint.id)
      .execute();
    const endpoint = await trx.selectFrom('webhook_endpoints').select(['failing_since', 'enabled']).where('id', '=', claimed.endpoint.id).executeTakeFirst();
    if (!endpoint || !endpoint.enabled) return { recorded: true, disabled: null };
    const failingMs = Date.parse(outcome.at) - Date.parse(endpoint.failing_since ?? outcome.at);
    const reason =
      next.disableNow ??
      (failingMs >= next.disableAfterMs ? `Every delivery failed for ${describeSpan(failingMs)} (last: ${outcome.error ?? 'failed'})` : null);
    if (!reason) return { recorded: true, disabled: null };
    await trx
      .updateTable('webhook_endpoints')
      .set({ enabled: 0, disabled_reason: reason, disabled_at: outcome.at, updated_at: outcome.at })
      .where('id', '=', claimed.endpoint.id)
      .execute();
    // This attempt keeps its own outcome (the HTTP 500 that ended the run); the endpoint's other
    // deliveries waiting for an attempt fail as not sent.
    await trx.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('id', '=', claimed.delivery.id).execute();
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null, error: 'Webhook disabled', updated_at: outcome.at })
      .where('endpoint_id', '=', claimed.endpoint.id)
      .where('status', '=', 'pending')
      .execute();
    return { recorded: true, disabled: reason };
  });
}

/** Fails a claimed delivery whose endpoint was turned off meanwhile, without sending it. */
export async function failUnsent(db: Db, claimed: ClaimedDelivery, owner: string, error: string): Promise<void> {
  const at = now();
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, lease_owner: null, lease_until: null, attempts: sql`attempts - 1`, error, updated_at: at })
    .where('id', '=', claimed.delivery.id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'sending')
    .execute();
}

/**
 * Gives back a delivery whose worker stopped mid-attempt (shutdown): due at once for the next worker,
 * here after a restart or on another node, and the attempt is not counted. The receiver may have
 * got it already: delivery is at least once, and `webhook-id` lets receivers drop a repeat.
 */
export async function release(db: Db, claimed: ClaimedDelivery, owner: string): Promise<void> {
  const at = now();
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: at, lease_owner: null, lease_until: null, attempts: sql`attempts - 1`, updated_at: at })
    .where('id', '=', claimed.delivery.id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'sending')
    .execute();
}

/**
 * A failure this long after the endpoint's previous one starts a new run of failures: longer than
 * any wait of the retry schedule (10 h), so an endpoint that keeps failing is never between runs.
 */
const QUIET_MS = 24 * 3_600_000;

function describeSpan(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours >= 48) return `${Math.floor(hours / 24)} days`;
  if (hours >= 1) return `${Math.floor(hours)} hours`;
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds >= 120 ? `${Math.floor(seconds / 60)} minutes` : `${seconds} seconds`;
}
