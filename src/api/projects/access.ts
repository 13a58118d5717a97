import type { FastifyRequest } from 'fastify';
import { assertProjectAccess } from '../../http/auth.js';
import type { Project } from '../../projects/project.js';
import { getProject } from '../../projects/projects.js';

/**
 * The project an admin route acts on, after checking that the caller may reach it. A secret key of
 * another project gets the same 404 as an unknown id, so project ids cannot be probed.
 */
export async function adminProject(request: FastifyRequest, projectId: string): Promise<Project> {
  assertProjectAccess(request, projectId);
  return getProject(request.server.deps.store.db, projectId);
}
