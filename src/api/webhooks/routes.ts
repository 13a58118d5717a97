import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX } from '../../http/auth.js';
import { deleteEndpoint } from '../../webhooks/endpoints.js';
import { adminProject } from '../projects/access.js';
import { adminError, adminErrors, projectParams } from '../projects/admin-schema.js';
import {
  createWebhookBody,
  deliveriesQuery,
  deliveryList,
  deliveryParams,
  deliveryWrapped,
  patchWebhookBody,
  rotateSecretBody,
  webhookCreated,
  webhookList,
  webhookParams,
  webhookSecretRotated,
  webhookWrapped,
} from './schema.js';
import {
  createWebhook,
  getWebhook,
  getWebhookDelivery,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  sendWebhookTest,
  updateWebhook,
} from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/webhooks`;
const disabled = adminError.describe('`Webhook is disabled`: turn it back on first (PATCH `enabled: true`).');

/**
 * Admin API for outbound webhooks: endpoints that receive the project's events signed as Standard
 * Webhooks, their deliveries, retries and a test event. The signing secret is shown once.
 */
export const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  const deps = app.deps;

  app.post(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'createWebhook',
      summary: 'Create a webhook endpoint',
      description:
        'Registers a URL that receives the chosen events (all when `events` is absent). The response holds the signing secret; it is stored encrypted and never shown again.',
      params: projectParams,
      body: createWebhookBody,
      response: { 201: webhookCreated, ...adminErrors, 409: adminError.describe('The project has the most webhooks it may have.') },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      return reply.code(201).send(await createWebhook(deps, project.id, request.body));
    },
  });

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      description: 'The project’s webhook endpoints, oldest first, with why one was turned off.',
      params: projectParams,
      response: { 200: webhookList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { webhooks: await listWebhooks(deps, project.id) };
    },
  });

  app.get(`${BASE}/:webhookId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'getWebhook',
      summary: 'Read a webhook endpoint',
      description: 'One endpoint; never its secret.',
      params: webhookParams,
      response: { 200: webhookWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { webhook: await getWebhook(deps, project.id, request.params.webhookId) };
    },
  });

  app.patch(`${BASE}/:webhookId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'updateWebhook',
      summary: 'Update a webhook endpoint',
      description:
        'Changes the URL, the events or the description, or turns the endpoint off and on. Off, nothing is queued or sent to it (deliveries due fail; retry them once it is on again); turning it on clears the reason it was turned off.',
      params: webhookParams,
      body: patchWebhookBody,
      response: { 200: webhookWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { webhook: await updateWebhook(deps, project.id, request.params.webhookId, request.body) };
    },
  });

  app.delete(`${BASE}/:webhookId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint',
      description: 'Deletes the endpoint and its deliveries; nothing more is sent to it.',
      params: webhookParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      await deleteEndpoint(deps.store.db, project.id, request.params.webhookId);
      return reply.code(204).send(null);
    },
  });

  app.post(`${BASE}/:webhookId/secret/rotate`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description:
        'Makes a new secret, shown only in this response. For `previousSecretValidForSeconds` (default a day) deliveries carry a signature with each secret, so receivers switch without losing any.',
      params: webhookParams,
      body: rotateSecretBody,
      response: { 200: webhookSecretRotated, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      const grace = request.body?.previousSecretValidForSeconds ?? 86_400;
      return rotateWebhookSecret(deps, project.id, request.params.webhookId, grace);
    },
  });

  app.post(`${BASE}/:webhookId/test`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'testWebhook',
      summary: 'Send a test event',
      description:
        'Sends a signed `webhook.test` event to this endpoint now and returns its delivery after the attempt: `delivered`, or `pending` with the error and the time of the next attempt.',
      params: webhookParams,
      response: { 200: deliveryWrapped, ...adminErrors, 409: disabled },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { delivery: await sendWebhookTest(deps, project.id, request.params.webhookId, request.log) };
    },
  });

  app.get(`${BASE}/:webhookId/deliveries`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's deliveries",
      description: 'Newest first: status, attempts, the last response status and duration, the error, and when the next attempt is due.',
      params: webhookParams,
      querystring: deliveriesQuery,
      response: { 200: deliveryList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return listWebhookDeliveries(deps, project.id, request.params.webhookId, request.query);
    },
  });

  app.get(`${BASE}/:webhookId/deliveries/:deliveryId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'getWebhookDelivery',
      summary: 'Read a delivery',
      description: 'One delivery of this endpoint.',
      params: deliveryParams,
      response: { 200: deliveryWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { delivery: await getWebhookDelivery(deps, project.id, request.params.webhookId, request.params.deliveryId) };
    },
  });

  app.post(`${BASE}/:webhookId/deliveries/:deliveryId/retry`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['webhooks'],
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again',
      description:
        'Makes the delivery due now with a fresh retry schedule, whatever its state (a delivered one is sent again, with the same `webhook-id`). The workers send it within a second.',
      params: deliveryParams,
      response: {
        202: deliveryWrapped,
        ...adminErrors,
        409: adminError.describe('`Delivery is being sent` (an attempt is in flight), or `Webhook is disabled`.'),
      },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      const { webhookId, deliveryId } = request.params;
      return reply.code(202).send({ delivery: await retryWebhookDelivery(deps, project.id, webhookId, deliveryId) });
    },
  });
};
