import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { newId, now } from '../lib/ids.js';
import { keepingRows } from '../store/lock.js';
import type { Database } from '../store/schema.js';

/** Every event type an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'conversation.created',
  'conversation.closed',
  'conversation.handoff_requested',
  'conversation.handoff_accepted',
  'conversation.handed_back',
  'message.created',
  'feedback.created',
  'knowledge.source.ready',
  'knowledge.source.failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the event `POST …/webhooks/{id}/test` sends; it goes to that endpoint only, whatever its filter. */
export const TEST_EVENT_TYPE = 'webhook.test';

type Db = Kysely<Database> | Transaction<Database>;

/** Whether an endpoint's filter (null: every type) takes events of `type`. */
export function takesEvent(filter: string | null, type: string): boolean {
  if (filter === null) return true;
  return (JSON.parse(filter) as string[]).includes(type);
}

/**
 * Puts an event in the outbox: the body `{type, timestamp, data}` once, and one pending delivery
 * for each enabled endpoint of the project that takes the type. Call it with the transaction that
 * writes the change, so the event exists exactly when the change committed; the delivery workers
 * send it afterwards, never on the caller's time. A project without a matching endpoint costs one
 * indexed read and stores nothing. Returns the event id (`webhook-id`), or null when nothing took it.
 */
export async function enqueueEvent(db: Db, projectId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<string | null> {
  const targets = await eventTargets(db, projectId, type);
  if (targets.length === 0) return null;
  return (await insertEvent(db, projectId, type, data, targets)).eventId;
}

/**
 * The ids of the project's enabled endpoints that take `type`, kept from being deleted until the
 * caller's transaction ends: an endpoint deleted meanwhile would fail the deliveries' foreign key.
 */
async function eventTargets(db: Db, projectId: string, type: WebhookEventType): Promise<string[]> {
  // SQL text: it runs in the transaction of every message stored, and building and compiling the
  // query cost more than running it.
  const { rows: endpoints } = await sql<{ id: string; events: string | null }>`
    select id, events from webhook_endpoints where project_id = ${projectId} and enabled = 1${keepingRows(db)}`.execute(db);
  return endpoints.filter((e) => takesEvent(e.events, type)).map((e) => e.id);
}

/**
 * A condition, for a statement of another module, that holds when the project has no enabled
 * endpoint: no event of it would be stored. A writer that commits a change in one statement when
 * nobody listens (the ingestion's switch of generations) puts it in that statement, so the check
 * and the change see the same endpoints, and writes the change with enqueueEvent in a
 * transaction when it fails.
 */
export function withoutEndpoints(projectId: string): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from webhook_endpoints where project_id = ${projectId} and enabled = 1)`;
}

/** Stores an event and its pending deliveries to `endpointIds`, due now. */
export async function insertEvent(
  db: Db,
  projectId: string,
  type: string,
  data: Record<string, unknown>,
  endpointIds: readonly string[],
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const at = now();
  const id = newId('evt');
  await db
    .insertInto('webhook_events')
    .values({ id, project_id: projectId, type, payload: JSON.stringify({ type, timestamp: at, data }), created_at: at })
    .execute();
  const deliveryIds = endpointIds.map(() => newId('dlv'));
  await db
    .insertInto('webhook_deliveries')
    .values(
      endpointIds.map((endpointId, i) => ({
        id: deliveryIds[i]!,
        project_id: projectId,
        endpoint_id: endpointId,
        event_id: id,
        status: 'pending' as const,
        attempts: 0,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: null,
        response_status: null,
        duration_ms: null,
        error: null,
        delivered_at: null,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
  return { eventId: id, deliveryIds };
}
