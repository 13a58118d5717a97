import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX } from '../../http/auth.js';
import { deleteSkill } from '../../skills/skills.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import { createSkillBody, patchSkillBody, skillList, skillParams, skillWrapped } from './schema.js';
import { createSkill, getSkill, listSkills, updateSkill } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/skills`;

/** Admin API for skills: named workflows; the enabled ones appear in the widget's `availableSkills`. */
export const skillRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['skills'],
      operationId: 'createSkill',
      summary: 'Create a skill',
      description: 'A named workflow; enabled skills appear in the widget’s `availableSkills` and in the agent’s prompt.',
      params: projectParams,
      body: createSkillBody,
      response: { 201: skillWrapped, ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      return reply.code(201).send({ skill: await createSkill(db, project.id, request.body) });
    },
  });

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['skills'],
      operationId: 'listSkills',
      summary: 'List skills',
      description: 'The project’s skills, oldest first; `enabled` filters.',
      params: projectParams,
      querystring: z.object({
        enabled: z
          .enum(['true', 'false'])
          .optional()
          .describe('"true": only enabled skills; "false": only disabled ones; absent: all.'),
      }),
      response: { 200: skillList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      const skills = await listSkills(db, project.id);
      const want = request.query.enabled;
      return { skills: want === undefined ? skills : skills.filter((s) => s.enabled === (want === 'true')) };
    },
  });

  app.get(`${BASE}/:skillId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['skills'],
      operationId: 'getSkill',
      summary: 'Read a skill',
      description: 'One skill with its instructions.',
      params: skillParams,
      response: { 200: skillWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { skill: await getSkill(db, project.id, request.params.skillId) };
    },
  });

  app.patch(`${BASE}/:skillId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['skills'],
      operationId: 'updateSkill',
      summary: 'Update a skill',
      description: 'Fields given replace the stored ones.',
      params: skillParams,
      body: patchSkillBody,
      response: { 200: skillWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { skill: await updateSkill(db, project.id, request.params.skillId, request.body) };
    },
  });

  app.delete(`${BASE}/:skillId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['skills'],
      operationId: 'deleteSkill',
      summary: 'Delete a skill',
      description: 'The skill is gone from the widget and the prompt at once.',
      params: skillParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      await deleteSkill(db, project.id, request.params.skillId);
      return reply.code(204).send(null);
    },
  });
};
