import type { Kysely, Selectable } from 'kysely';
import { Conflict, NotFound, ValidationError } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import type { SecretSealer } from '../lib/secret-box.js';
import { refusePrivateHost } from '../net/address-policy.js';
import { projectGone } from '../store/index.js';
import { lockKey } from '../store/lock.js';
import type { Database, WebhookEndpointsTable } from '../store/schema.js';
import { newSigningSecret } from './signing.js';

type Db = Kysely<Database>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

/** Endpoints a project may have: every event fans out to each of them. */
export const MAX_ENDPOINTS_PER_PROJECT = 50;

/** How long deliveries stay signed with the old secret too after a rotation, unless the caller says otherwise. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60;

/** Binds a sealed secret to its endpoint: a ciphertext copied to another row does not open. */
export const secretContext = (endpointId: string) => `webhook-secret:${endpointId}`;

/**
 * Checks a URL an admin gives: http or https, no user name or password (the signature authenticates
 * the request), and, unless private networks are allowed, not a host the guard refuses whatever DNS
 * says (a literal private or loopback address, `localhost`). Other host names are checked at every
 * delivery, when they are resolved.
 */
export function checkWebhookUrl(raw: string, allowPrivateNetwork: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw ValidationError([{ path: 'url', message: 'must be an absolute http or https URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ValidationError([{ path: 'url', message: 'must be an http or https URL' }]);
  if (url.username || url.password) throw ValidationError([{ path: 'url', message: 'must not contain a user name or password' }]);
  refusePrivateHost(url, allowPrivateNetwork);
  // The limit holds for the URL as stored and sent: "é" is six characters once percent-encoded.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    throw ValidationError([{ path: 'url', message: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once encoded (it is ${url.href.length})` }]);
  }
  return url.href;
}

/** The longest webhook URL, as given and as stored (percent-encoded). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

function eventsColumn(events: readonly string[] | null | undefined): string | null {
  return events ? JSON.stringify([...new Set(events)]) : null;
}

export interface NewEndpoint {
  url: string;
  /** Event types to receive; absent or null: every type, those added later too. */
  events?: readonly string[] | null;
  description?: string | null;
}

/** Creates an endpoint with a new signing secret (sealed at rest); the secret is returned this once. */
export async function createEndpoint(
  db: Db,
  box: SecretSealer,
  projectId: string,
  input: NewEndpoint,
  options: { allowPrivateNetwork: boolean },
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  const url = checkWebhookUrl(input.url, options.allowPrivateNetwork);
  const at = now();
  const id = newId('wh');
  const secret = newSigningSecret();
  const row: WebhookEndpointRow = {
    id,
    project_id: projectId,
    url,
    description: input.description ?? null,
    events: eventsColumn(input.events),
    secret: box.seal(secret, secretContext(id)),
    previous_secret: null,
    previous_secret_until: null,
    enabled: 1,
    disabled_reason: null,
    disabled_at: null,
    failing_since: null,
    last_failed_at: null,
    created_at: at,
    updated_at: at,
  };
  // The count and the insert under one lock per project: endpoints created at once stop at the cap.
  await db.transaction().execute(async (trx) => {
    await lockKey(trx, `webhook-endpoints:${projectId}`);
    const count = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_ENDPOINTS_PER_PROJECT) throw Conflict(`A project can have at most ${MAX_ENDPOINTS_PER_PROJECT} webhooks`);
    await trx.insertInto('webhook_endpoints').values(row).execute();
  }).catch((err: unknown) => {
    // The project was deleted since the route found it.
    throw projectGone(err);
  });
  return { row, secret };
}

/** A project's endpoints, oldest first. */
export async function listEndpoints(db: Db, projectId: string): Promise<WebhookEndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
}

/** The endpoint of this project, or 404 `Webhook not found`. */
export async function getEndpoint(db: Db, projectId: string, id: string): Promise<WebhookEndpointRow> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Webhook not found');
  return row;
}

export interface EndpointPatch {
  url?: string;
  events?: readonly string[] | null;
  description?: string | null;
  /** Turning an endpoint back on clears the reason it was turned off and its run of failures. */
  enabled?: boolean;
}

export async function updateEndpoint(
  db: Db,
  projectId: string,
  id: string,
  patch: EndpointPatch,
  options: { allowPrivateNetwork: boolean },
): Promise<WebhookEndpointRow> {
  const current = await getEndpoint(db, projectId, id);
  const at = now();
  const set: Partial<WebhookEndpointRow> = { updated_at: at };
  if (patch.url !== undefined) set.url = checkWebhookUrl(patch.url, options.allowPrivateNetwork);
  if (patch.events !== undefined) set.events = eventsColumn(patch.events);
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.enabled === true && !current.enabled) Object.assign(set, { enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null });
  if (patch.enabled === false && current.enabled) Object.assign(set, { enabled: 0, disabled_reason: null, disabled_at: at });
  await db.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
  return getEndpoint(db, projectId, id);
}

/** Deletes the endpoint with its deliveries (events other endpoints still send stay). */
export async function deleteEndpoint(db: Db, projectId: string, id: string): Promise<void> {
  const res = await db.deleteFrom('webhook_endpoints').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw NotFound('Webhook not found');
}

/**
 * Gives the endpoint a new secret, returned this once. For `graceSeconds` the old one keeps signing
 * too (Standard Webhooks sends both signatures, space-separated), so receivers can switch without
 * dropping a delivery; 0 stops it at once (a leaked secret).
 */
export async function rotateSecret(
  db: Db,
  box: SecretSealer,
  projectId: string,
  id: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  const current = await getEndpoint(db, projectId, id);
  const secret = newSigningSecret();
  const at = now();
  await db
    .updateTable('webhook_endpoints')
    .set({
      secret: box.seal(secret, secretContext(id)),
      previous_secret: graceSeconds > 0 ? current.secret : null,
      previous_secret_until: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null,
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
  return { row: await getEndpoint(db, projectId, id), secret };
}

/** The secrets a delivery is signed with now: the current one, and the previous one during its grace period. */
export function signingSecrets(box: SecretSealer, row: Pick<WebhookEndpointRow, 'id' | 'secret' | 'previous_secret' | 'previous_secret_until'>, at = now()): string[] {
  const secrets = [box.open(row.secret, secretContext(row.id))];
  if (row.previous_secret && row.previous_secret_until && row.previous_secret_until > at) {
    secrets.push(box.open(row.previous_secret, secretContext(row.id)));
  }
  return secrets;
}
