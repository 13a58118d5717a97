import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX, isInstanceAdmin, visibleProjectIds } from '../../http/auth.js';
import { Forbidden } from '../../lib/errors.js';
import { secretBox } from '../../lib/secret-box.js';
import { createProject, listProjects, rotateHmacSecret, updateProject } from '../../projects/projects.js';
import { adminProject } from './access.js';
import {
  adminError,
  adminErrors,
  hmacRotated,
  keyCreated,
  keyList,
  keyParams,
  keyWrapped,
  projectCreated,
  projectList,
  projectParams,
  projectWrapped,
} from './admin-schema.js';
import { createKeyBody, createProjectBody, patchProjectBody } from './schema.js';
import { createApiKey, listApiKeys, removeProject, revokeApiKey } from './service.js';

const ADMIN = `${API_PREFIX}/admin`;

/**
 * Admin API for projects, their keys and their HMAC secret. The instance admin token reaches every
 * project; a secret key reaches its own project only (others answer 404, as if unknown).
 */
export const projectAdminRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${ADMIN}/projects`, {
    config: { auth: 'admin', permission: 'owner' },
    schema: {
      tags: ['projects'],
      operationId: 'createProject',
      summary: 'Create a project',
      description:
        'Instance admin token or an owner only. Creates the project with a public key, a secret key and an HMAC secret, all shown only in this response.',
      body: createProjectBody,
      response: {
        201: projectCreated,
        403: adminError.describe('A secret key tried to create a project: `{"error":"Only the instance admin can create projects"}`.'),
      },
    },
    handler: async (request, reply) => {
      // A project's secret key administers that project; creating new ones is an instance-level act.
      if (!isInstanceAdmin(request)) throw Forbidden('Only the instance admin can create projects');
      const created = await createProject(db, secretBox(app.deps.config), request.body);
      return reply.code(201).send(created);
    },
  });

  app.get(`${ADMIN}/projects`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'listProjects',
      summary: 'List projects',
      description: 'The instance admin and owners see every project; a secret key only its own; a member those they have a role on.',
      response: { 200: projectList },
    },
    handler: async (request) => {
      // Throws without a caller: the auth hook has refused anyone else, and none must never mean all.
      const visible = visibleProjectIds(request);
      const onlyId = request.caller?.type === 'key' ? request.caller.owner.project.id : undefined;
      const projects = await listProjects(db, onlyId);
      return { projects: visible ? projects.filter((p) => visible.has(p.id)) : projects };
    },
  });

  app.get(`${ADMIN}/projects/:projectId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'getProject',
      summary: 'Read a project',
      description: 'The project with its settings.',
      params: projectParams,
      response: { 200: projectWrapped, ...adminErrors },
    },
    handler: async (request) => ({ project: await adminProject(request, request.params.projectId) }),
  });

  app.patch(`${ADMIN}/projects/:projectId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'updateProject',
      summary: 'Update a project',
      description:
        'Renames and/or changes settings. Settings merge one level deep: `{"widget":{"primaryColor":"#000"}}` keeps the other widget fields; a top-level key given replaces that key.',
      params: projectParams,
      body: patchProjectBody,
      response: { 200: projectWrapped, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { project: await updateProject(db, request.params.projectId, request.body) };
    },
  });

  app.delete(`${ADMIN}/projects/:projectId`, {
    config: { auth: 'admin', permission: 'owner' },
    schema: {
      tags: ['projects'],
      operationId: 'deleteProject',
      summary: 'Delete a project',
      description:
        'Deletes the project and everything in it (keys, end users, conversations, knowledge, actions, skills). The admin token, an owner, or the project’s own secret key.',
      params: projectParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      await removeProject(db, request.params.projectId);
      return reply.code(204).send(null);
    },
  });

  app.post(`${ADMIN}/projects/:projectId/keys`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'createKey',
      summary: 'Create an API key',
      description: 'The full key is in `secret` and is shown only in this response.',
      params: projectParams,
      body: createKeyBody.nullish(),
      response: { 201: keyCreated, ...adminErrors },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      const input = request.body ?? { kind: 'public' as const };
      return reply.code(201).send(await createApiKey(db, request.params.projectId, input));
    },
  });

  app.get(`${ADMIN}/projects/:projectId/keys`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'listKeys',
      summary: 'List API keys',
      description: 'Every key of the project, revoked ones included; never the keys themselves.',
      params: projectParams,
      response: { 200: keyList, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { keys: await listApiKeys(db, request.params.projectId) };
    },
  });

  app.delete(`${ADMIN}/projects/:projectId/keys/:keyId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'revokeKey',
      summary: 'Revoke an API key',
      description: 'The key answers 401 on every endpoint from now on. Revoking twice returns the same key.',
      params: keyParams,
      response: { 200: keyWrapped, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { key: await revokeApiKey(db, request.params.projectId, request.params.keyId) };
    },
  });

  app.post(`${ADMIN}/projects/:projectId/hmac-secret/rotate`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['projects'],
      operationId: 'rotateHmacSecret',
      summary: 'Rotate the HMAC secret',
      description: 'Generates a new HMAC secret; identity signatures and JWTs made with the old one stop verifying at once.',
      params: projectParams,
      response: { 200: hmacRotated, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { hmacSecret: await rotateHmacSecret(db, secretBox(app.deps.config), request.params.projectId) };
    },
  });
};
