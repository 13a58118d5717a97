import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { BadRequest, PayloadTooLarge } from '../../lib/errors.js';
import type { SourceType } from '../../knowledge/types.js';
import { adminError, adminErrors, createSourceBody, projectParams, searchQuery, searchResults, sourceList, sourceParams, sourceWrapped } from './schema.js';
import { createSource, deleteSource, fromBody, getSource, listSources, searchKnowledge, syncSource } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/knowledge`;
/** Uploaded files and pasted content: large enough for a manual, small enough to hold in memory. */
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const MAX_JSON_BYTES = 6 * 1024 * 1024;

/** The source type of an uploaded file, from its name and (for PDF) its first bytes. */
function fileType(filename: string, data: Buffer): SourceType | null {
  const name = filename.toLowerCase();
  if (name.endsWith('.pdf') || data.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (/\.(md|markdown)$/.test(name)) return 'markdown';
  if (/\.html?$/.test(name)) return 'html';
  if (name.endsWith('.txt')) return 'text';
  return null;
}

/**
 * Admin API for a project's knowledge: add sources (JSON or uploaded file), watch their ingestion,
 * re-sync URL sources, delete them, and try retrieval.
 */
export const knowledgeRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 5 } });

  app.post(BASE, {
    bodyLimit: MAX_JSON_BYTES,
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Add a knowledge source',
      description: 'Stores the source as `pending` and ingests it in the background; poll GET …/{sourceId} for progress.',
      params: projectParams,
      body: createSourceBody,
      response: { 201: sourceWrapped, 400: adminErrors[400], 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      const source = await createSource(app.deps, request.params.projectId, fromBody(request.body));
      return reply.code(201).send({ source });
    },
  });

  app.post(`${BASE}/files`, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Upload a file as a knowledge source',
      description: 'multipart/form-data with one `file` (.md, .txt, .html, .pdf; at most 20 MiB) and an optional `title` field.',
      consumes: ['multipart/form-data'],
      params: projectParams,
      response: { 201: sourceWrapped, 400: adminError, 401: adminErrors[401], 404: adminErrors[404], 413: adminError, 429: adminErrors[429] },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      if (!request.isMultipart()) throw BadRequest('Expected multipart/form-data with a file');
      let file: { name: string; data: Buffer } | null = null;
      let title: string | undefined;
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          const data = await part.toBuffer().catch((err: { code?: string }) => {
            throw err.code === 'FST_REQ_FILE_TOO_LARGE' ? PayloadTooLarge() : err;
          });
          file = { name: part.filename, data };
        } else if (part.fieldname === 'title' && typeof part.value === 'string' && part.value.trim()) {
          title = part.value.trim().slice(0, 300);
        }
      }
      if (!file || file.data.length === 0) throw BadRequest('No file uploaded');
      const type = fileType(file.name, file.data);
      if (!type) throw BadRequest('Unsupported file type: upload .md, .txt, .html or .pdf');
      const payload = type === 'pdf' ? file.data.toString('base64') : file.data.toString('utf8');
      const fallback = file.name.replace(/\.[^.]+$/, '') || file.name;
      const source = await createSource(app.deps, request.params.projectId, {
        type,
        // Markdown titles itself from its first heading; other files take their name.
        title: title ?? (type === 'markdown' ? undefined : fallback),
        payload,
      });
      return reply.code(201).send({ source });
    },
  });

  app.get(BASE, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: "List a project's knowledge sources",
      params: projectParams,
      response: { 200: sourceList, 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { sources: await listSources(db, request.params.projectId) };
    },
  });

  app.get(`${BASE}/search`, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Search the knowledge base',
      description: 'The retrieval the agent uses, for testing it: ranked passages with scores and their source.',
      params: projectParams,
      querystring: searchQuery,
      response: { 200: searchResults, 400: adminErrors[400], 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { results: await searchKnowledge(app.deps, request.params.projectId, request.query.q, request.query.limit) };
    },
  });

  app.get(`${BASE}/:sourceId`, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Read a knowledge source and its ingestion progress',
      params: sourceParams,
      response: { 200: sourceWrapped, 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request) => {
      await adminProject(request, request.params.projectId);
      return { source: await getSource(db, request.params.projectId, request.params.sourceId) };
    },
  });

  app.post(`${BASE}/:sourceId/sync`, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Re-fetch a URL or sitemap source',
      description: 'Queues a new ingestion; the current content stays searchable until the new one is complete.',
      params: sourceParams,
      response: { 202: sourceWrapped, 400: adminError, 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      const source = await syncSource(app.deps, request.params.projectId, request.params.sourceId);
      return reply.code(202).send({ source });
    },
  });

  app.delete(`${BASE}/:sourceId`, {
    schema: {
      tags: ['admin', 'knowledge'],
      summary: 'Delete a knowledge source and every chunk of it',
      params: sourceParams,
      response: { 204: z.null().describe('Deleted.'), 401: adminErrors[401], 404: adminErrors[404], 429: adminErrors[429] },
    },
    handler: async (request, reply) => {
      await adminProject(request, request.params.projectId);
      await deleteSource(db, request.params.projectId, request.params.sourceId);
      return reply.code(204).send(null);
    },
  });
};
