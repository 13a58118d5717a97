import { z } from 'zod';
import { wholeNumberParam } from '../../lib/query-number.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../webhooks/endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';
import { projectParams } from '../projects/admin-schema.js';

export const MAX_DESCRIPTION_LENGTH = 500;
/** Longest grace period of the old secret after a rotation: a week. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;

export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES).describe('An event type.');

const url = z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH).describe('http(s) URL the events are POSTed to. Redirects are not followed.');
const events = z
  .array(webhookEventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .nullable()
  .describe('Event types to receive; null or absent: every type, including types added later.');
const description = z.string().max(MAX_DESCRIPTION_LENGTH).nullable().describe('A note for people (what receives these events).');

export const createWebhookBody = z
  .object({ url, events: events.optional(), description: description.optional() })
  .strict()
  .meta({ id: 'CreateWebhookRequest', description: 'A new webhook endpoint.' });
export type CreateWebhookBody = z.infer<typeof createWebhookBody>;

export const patchWebhookBody = z
  .object({
    url,
    events,
    description,
    enabled: z
      .boolean()
      .describe('false turns the endpoint off: no new deliveries, due ones fail (retry them later); true turns it back on and clears `disabledReason`.'),
  })
  .partial()
  .strict()
  .meta({ id: 'UpdateWebhookRequest', description: 'Fields to change.' });
export type PatchWebhookBody = z.infer<typeof patchWebhookBody>;

export const webhookSchema = z
  .object({
    id: z.string().describe('`wh_…`'),
    projectId: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()).nullable().describe('Event types it receives; null: every type.'),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe('Why AnswerDesk turned the endpoint off (every delivery failing for days, or a 410 Gone); null otherwise.'),
    disabledAt: z.string().nullable(),
    previousSecretValidUntil: z.string().nullable().describe('After a rotation: until when deliveries are signed with the old secret too.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Webhook', description: 'An endpoint that receives signed events (Standard Webhooks).' });
export type Webhook = z.infer<typeof webhookSchema>;

export const webhookWrapped = z.object({ webhook: webhookSchema }).meta({ id: 'WebhookResponse', description: 'A webhook endpoint.' });
export const webhookList = z
  .object({ webhooks: z.array(webhookSchema).describe('Oldest first.') })
  .meta({ id: 'WebhookList', description: "A project's webhook endpoints." });

const secret = z.string().describe('The signing secret (`whsec_` + base64), shown only now; stored encrypted.');
export const webhookCreated = z
  .object({ webhook: webhookSchema, secret })
  .meta({ id: 'WebhookCreated', description: 'The new endpoint and its signing secret, shown only in this response.' });
export const webhookSecretRotated = z
  .object({ webhook: webhookSchema, secret })
  .meta({ id: 'WebhookSecretRotated', description: 'The endpoint and its new signing secret, shown only in this response.' });

export const rotateSecretBody = z
  .object({
    previousSecretValidForSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROTATION_GRACE_SECONDS)
      .default(86_400)
      .describe('How long deliveries are also signed with the old secret (default a day); 0 stops it at once.'),
  })
  .strict()
  .meta({ id: 'RotateWebhookSecretRequest', description: 'Optional.' })
  .nullish();

export const webhookParams = projectParams.extend({
  webhookId: z.string().min(1).max(64).describe('Webhook id (`wh_…`).'),
});
export const deliveryParams = webhookParams.extend({
  deliveryId: z.string().min(1).max(64).describe('Delivery id (`dlv_…`).'),
});

export const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed'] as const;

export const deliverySchema = z
  .object({
    id: z.string().describe('`dlv_…`'),
    webhookId: z.string(),
    eventId: z.string().describe('`evt_…`: the `webhook-id` header, the same on every attempt.'),
    eventType: z.string(),
    status: z
      .enum(DELIVERY_STATUSES)
      .describe('pending: due at `nextAttemptAt`; sending: an attempt is in flight; delivered: a 2xx came back; failed: no attempt left.'),
    attempts: z.number().int().describe('Attempts made so far.'),
    responseStatus: z.number().int().nullable().describe('HTTP status of the last attempt, when a response came.'),
    durationMs: z.number().int().nullable().describe('How long the last attempt took.'),
    error: z.string().nullable().describe('Why the last attempt failed ("HTTP 500", a timeout, a refused address); null after a success.'),
    lastAttemptAt: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One event sent (or to be sent) to one endpoint.' });
export type WebhookDelivery = z.infer<typeof deliverySchema>;

export const deliveryWrapped = z.object({ delivery: deliverySchema }).meta({ id: 'WebhookDeliveryResponse', description: 'A delivery.' });

export const deliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this state.'),
  limit: wholeNumberParam(1, 100, 50),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page.'),
});

export const deliveryList = z
  .object({ deliveries: z.array(deliverySchema).describe('Newest first.'), nextCursor: z.string().optional() })
  .meta({ id: 'WebhookDeliveryList', description: "One page of an endpoint's deliveries." });
