import type { FastifyBaseLogger } from 'fastify';
import { secretBox } from '../../lib/secret-box.js';
import { Conflict } from '../../lib/errors.js';
import type { AppDeps } from '../../deps.js';
import type { DeliveryWithType } from '../../webhooks/deliveries.js';
import * as deliveries from '../../webhooks/deliveries.js';
import * as endpoints from '../../webhooks/endpoints.js';
import type { WebhookEndpointRow } from '../../webhooks/endpoints.js';
import { sendTestEvent, type WebhookDeps } from '../../webhooks/worker.js';
import type { CreateWebhookBody, PatchWebhookBody, Webhook, WebhookDelivery } from './schema.js';

type Deps = Pick<AppDeps, 'store' | 'config'> & Partial<Pick<AppDeps, 'metrics'>>;

/** What the webhooks core needs, from the app's deps. */
export function webhookDeps(deps: Deps): WebhookDeps {
  return { db: deps.store.db, box: secretBox(deps.config), allowPrivateNetwork: deps.config.ANSWERDESK_ALLOW_PRIVATE_NETWORK, metrics: deps.metrics };
}

/** The public view: never the secret. */
export function toWebhook(row: WebhookEndpointRow): Webhook {
  return {
    id: row.id,
    projectId: row.project_id,
    url: row.url,
    description: row.description,
    events: row.events === null ? null : (JSON.parse(row.events) as string[]),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    previousSecretValidUntil: row.previous_secret && row.previous_secret_until && row.previous_secret_until > new Date().toISOString() ? row.previous_secret_until : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toDelivery(row: DeliveryWithType): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.response_status,
    durationMs: row.duration_ms,
    error: row.error,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  };
}

export async function createWebhook(deps: Deps, projectId: string, input: CreateWebhookBody): Promise<{ webhook: Webhook; secret: string }> {
  const w = webhookDeps(deps);
  const { row, secret } = await endpoints.createEndpoint(w.db, w.box, projectId, input, w);
  return { webhook: toWebhook(row), secret };
}

export async function listWebhooks(deps: Deps, projectId: string): Promise<Webhook[]> {
  return (await endpoints.listEndpoints(deps.store.db, projectId)).map(toWebhook);
}

export async function getWebhook(deps: Deps, projectId: string, id: string): Promise<Webhook> {
  return toWebhook(await endpoints.getEndpoint(deps.store.db, projectId, id));
}

export async function updateWebhook(deps: Deps, projectId: string, id: string, patch: PatchWebhookBody): Promise<Webhook> {
  const w = webhookDeps(deps);
  return toWebhook(await endpoints.updateEndpoint(w.db, projectId, id, patch, w));
}

export async function rotateWebhookSecret(deps: Deps, projectId: string, id: string, graceSeconds: number): Promise<{ webhook: Webhook; secret: string }> {
  const w = webhookDeps(deps);
  const { row, secret } = await endpoints.rotateSecret(w.db, w.box, projectId, id, graceSeconds);
  return { webhook: toWebhook(row), secret };
}

export async function listWebhookDeliveries(
  deps: Deps,
  projectId: string,
  id: string,
  page: { limit: number; cursor?: string; status?: WebhookDelivery['status'] },
): Promise<{ deliveries: WebhookDelivery[]; nextCursor?: string }> {
  const endpoint = await endpoints.getEndpoint(deps.store.db, projectId, id);
  const { rows, nextCursor } = await deliveries.listDeliveries(deps.store.db, endpoint.id, page);
  return { deliveries: rows.map(toDelivery), ...(nextCursor ? { nextCursor } : {}) };
}

export async function getWebhookDelivery(deps: Deps, projectId: string, id: string, deliveryId: string): Promise<WebhookDelivery> {
  const endpoint = await endpoints.getEndpoint(deps.store.db, projectId, id);
  return toDelivery(await deliveries.getDelivery(deps.store.db, endpoint.id, deliveryId));
}

export async function retryWebhookDelivery(deps: Deps, projectId: string, id: string, deliveryId: string): Promise<WebhookDelivery> {
  const endpoint = await endpoints.getEndpoint(deps.store.db, projectId, id);
  if (!endpoint.enabled) throw Conflict('Webhook is disabled');
  return toDelivery(await deliveries.retryDelivery(deps.store.db, endpoint.id, deliveryId));
}

/** Sends a test event now; a failed attempt is logged (`log`: the request's) as the worker logs one. */
export async function sendWebhookTest(deps: Deps, projectId: string, id: string, log?: FastifyBaseLogger): Promise<WebhookDelivery> {
  return toDelivery(await sendTestEvent(webhookDeps(deps), projectId, id, { log }));
}
