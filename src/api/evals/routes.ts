import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deleteSuite } from '../../evals/suites.js';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import { createEvalBody, evalList, evalParams, evalResultSchema, evalRunCreated, evalRunParams, evalWrapped, runEvalBody } from './schema.js';
import { createEval, getEval, getEvalRun, listEvals, runCases, runStoredEval } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/evals`;
/**
 * The body as a whole, beside the schema's bound on every field: a realistic 100-case suite is tens
 * of kilobytes, but one with every field at its maximum at once (about 4 MB) is refused with 413.
 */
const EVAL_BODY_LIMIT = 1024 * 1024;

/**
 * Admin API for answer regression tests: run a set of questions through retrieval and the agent
 * (nothing is stored), or keep a named suite and compare each run with the one before.
 */
export const evalRoutes: FastifyPluginAsyncZod = async (app) => {
  const deps = app.deps;

  app.post(`${BASE}/run`, {
    config: { auth: 'admin' },
    bodyLimit: EVAL_BODY_LIMIT,
    schema: {
      tags: ['evals'],
      operationId: 'runEvalCases',
      summary: 'Run question cases once',
      description:
        'Answers each case as the agent would (same model, prompt, skills and knowledge; actions are not called) and measures retrieval and the answers. No conversation is stored. Answers within the request: at most 100 cases.',
      params: projectParams,
      body: runEvalBody,
      response: { 200: evalResultSchema, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return runCases(deps, project, request.body.cases, request.log);
    },
  });

  app.post(BASE, {
    config: { auth: 'admin' },
    bodyLimit: EVAL_BODY_LIMIT,
    schema: {
      tags: ['evals'],
      operationId: 'createEval',
      summary: 'Save an eval suite',
      description: 'Stores a named set of cases, to be run again after a prompt, model or knowledge change. A project keeps at most 100 suites (409 beyond).',
      params: projectParams,
      body: createEvalBody,
      response: { 201: evalWrapped, ...adminErrors, 409: adminErrors[404].describe('The project already keeps 100 suites.') },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      return reply.code(201).send({ eval: await createEval(deps, project, request.body) });
    },
  });

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['evals'],
      operationId: 'listEvals',
      summary: 'List eval suites',
      description: "The project's suites, newest first, each with its case count and last run.",
      params: projectParams,
      response: { 200: evalList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { evals: await listEvals(deps, project) };
    },
  });

  app.get(`${BASE}/:evalId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['evals'],
      operationId: 'getEval',
      summary: 'Get an eval suite',
      description: 'The suite with its cases and its stored runs (metrics only, newest first).',
      params: evalParams,
      response: { 200: evalWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { eval: await getEval(deps, project, request.params.evalId) };
    },
  });

  app.post(`${BASE}/:evalId/run`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['evals'],
      operationId: 'runEval',
      summary: 'Run an eval suite',
      description:
        'Runs every case of the suite (as `runEvalCases` does), stores the run with its results, and returns it with the difference from the previous run: each metric, and the questions that now fail or now pass.',
      params: evalParams,
      response: { 201: evalRunCreated, ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      return reply.code(201).send(await runStoredEval(deps, project, request.params.evalId, request.log));
    },
  });

  app.get(`${BASE}/:evalId/runs/:runId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['evals'],
      operationId: 'getEvalRun',
      summary: 'Get a stored run of an eval suite',
      description:
        'A kept run with its per-case results, and how it compares with the run of the suite before it (null when that one is the first, or no longer kept), as `runEval` answered when it ran.',
      params: evalRunParams,
      response: { 200: evalRunCreated, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return getEvalRun(deps, project, request.params.evalId, request.params.runId);
    },
  });

  app.delete(`${BASE}/:evalId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['evals'],
      operationId: 'deleteEval',
      summary: 'Delete an eval suite',
      description: 'The suite and all its runs.',
      params: evalParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      await deleteSuite(deps.store.db, project.id, request.params.evalId);
      return reply.code(204).send(null);
    },
  });
};
