import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX } from '../../http/auth.js';
import { validationErrorSchema } from '../../http/error-schemas.js';
import { searchWithSources } from '../../knowledge/sources.js';
import { BadRequest, HttpError, ValidationError } from '../../lib/errors.js';
import { clipText, nulDetails } from '../../lib/nul.js';
import { adminProject } from '../projects/access.js';
import {
  adminError,
  adminErrors,
  createSourceBody,
  MAX_TITLE_CHARS,
  projectParams,
  searchQuery,
  searchResults,
  sourceList,
  sourceParams,
  sourceWrapped,
  uploadSourceBody,
} from './schema.js';
import { createSource, deleteSource, fromBody, getSource, listSources, sourceFromFile, syncSource } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/knowledge`;
/** Uploaded files and pasted content: large enough for a manual, small enough to hold in memory. */
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const MAX_JSON_BYTES = 6 * 1024 * 1024;

/**
 * Admin API for a project's knowledge: add sources (JSON or uploaded file), watch their ingestion,
 * re-sync URL sources, delete them, and try retrieval.
 */
export const knowledgeRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 5 } });

  app.post(BASE, {
    config: { auth: 'admin' },
    bodyLimit: MAX_JSON_BYTES,
    schema: {
      tags: ['knowledge'],
      operationId: 'createKnowledgeSource',
      summary: 'Add a knowledge source',
      description:
        'Stores the source as `pending` and ingests it in the background; poll GET …/{sourceId} for progress. Body limit 6 MiB; PDF files are uploaded with POST …/knowledge/files.',
      params: projectParams,
      body: createSourceBody,
      response: { 201: sourceWrapped, ...adminErrors },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      const source = await createSource(app.deps, request.params.projectId, fromBody(request.body));
      return reply.code(201).send({ source });
    },
  });

  app.post(`${BASE}/files`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'uploadKnowledgeFile',
      summary: 'Upload a file as a knowledge source',
      description:
        'multipart/form-data with one `file` (.md, .markdown, .txt, .html, .htm, .pdf; at most 20 MiB) and an optional `title` field. Other files, and files whose content is not what their name says (a Word document, an image), get 400 with a message saying what to do. Over the limits: 413 `File too large`, `Too many files` or `Too many fields`.',
      params: projectParams,
      documented: { multipartBody: uploadSourceBody },
      response: {
        201: sourceWrapped,
        400: adminError
          .or(validationErrorSchema)
          .describe(
            'Not multipart (`Expected multipart/form-data with a file`), a body the multipart parser cannot read (`Malformed multipart/form-data body`), no file (`No file uploaded`), an empty one (`The file is empty`), a file type it cannot read (`Unsupported file type: …`), or an invalid path parameter (validation error).',
          ),
        ...adminErrors,
        413: adminError.describe('Over a limit: `File too large` (20 MiB), `Too many files` (1), `Too many fields`, `Too many parts`.'),
      },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      if (!request.isMultipart()) throw BadRequest('Expected multipart/form-data with a file');
      let file: { name: string; data: Buffer } | null = null;
      let title: string | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            // Over MAX_UPLOAD_BYTES this throws, answered 413 "File too large" by the error handler.
            file = { name: part.filename, data: await part.toBuffer() };
          } else if (part.fieldname === 'title' && typeof part.value === 'string' && part.value.trim()) {
            // Form fields skip the JSON body's U+0000 check (the body is read here, not parsed before).
            const details = nulDetails({ title: part.value });
            if (details.length > 0) throw ValidationError(details);
            title = clipText(part.value.trim(), MAX_TITLE_CHARS);
          }
        }
      } catch (err) {
        throw malformedMultipart(err);
      }
      // A form sent without choosing a file has a file part with no name and no bytes. A named
      // empty file was uploaded: sourceFromFile says it is empty.
      if (!file || (file.data.length === 0 && !file.name)) throw BadRequest('No file uploaded');
      const source = await createSource(app.deps, request.params.projectId, sourceFromFile(file.name, file.data, { title }));
      return reply.code(201).send({ source });
    },
  });

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'listKnowledgeSources',
      summary: "List a project's knowledge sources",
      description: 'Every source with its status and ingestion progress, oldest first.',
      params: projectParams,
      response: { 200: sourceList, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { sources: await listSources(db, request.params.projectId) };
    },
  });

  app.get(`${BASE}/search`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'searchKnowledge',
      summary: 'Search the knowledge base',
      description: 'The retrieval the agent uses, for testing it: ranked passages with scores and their source.',
      params: projectParams,
      querystring: searchQuery,
      response: { 200: searchResults, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { results: await searchWithSources(app.deps, request.params.projectId, request.query.q, request.query.limit) };
    },
  });

  app.get(`${BASE}/:sourceId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'getKnowledgeSource',
      summary: 'Read a knowledge source',
      description: 'The source with its status (`pending`, `processing`, `ready`, `failed`) and ingestion progress.',
      params: sourceParams,
      response: { 200: sourceWrapped, ...adminErrors },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { source: await getSource(db, request.params.projectId, request.params.sourceId) };
    },
  });

  app.post(`${BASE}/:sourceId/sync`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'syncKnowledgeSource',
      summary: 'Re-fetch a URL or sitemap source',
      description: 'Queues a new ingestion; the current content stays searchable until the new one is complete.',
      params: sourceParams,
      response: {
        202: sourceWrapped,
        400: adminError
          .or(validationErrorSchema)
          .describe('The source is not a URL or sitemap (`Only url and sitemap sources can be synced`), or an invalid path parameter (validation error).'),
        ...adminErrors,
      },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      const source = await syncSource(app.deps, request.params.projectId, request.params.sourceId);
      return reply.code(202).send({ source });
    },
  });

  app.delete(`${BASE}/:sourceId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['knowledge'],
      operationId: 'deleteKnowledgeSource',
      summary: 'Delete a knowledge source',
      description: 'Deletes the source and every chunk of it; answers stop citing it at once.',
      params: sourceParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      await deleteSource(db, request.params.projectId, request.params.sourceId);
      return reply.code(204).send(null);
    },
  });
};

/**
 * A body the multipart parser could not read (no boundary in its content type, a part cut off, a
 * broken part header) is the client's: 400. Its limits (413) and our own errors pass as they are.
 */
function malformedMultipart(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof HttpError || String((err as { code?: unknown }).code ?? '').startsWith('FST_')) return err;
  return BadRequest('Malformed multipart/form-data body');
}
