import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { permissionsOf, useMe, type Permissions } from './auth';

export type Project = components['schemas']['Project'];

export const projectsKey = ['projects'] as const;
export const projectKey = (projectId: string) => ['projects', projectId] as const;

/** The projects the user can see (the owner: all; a member: those with a membership). */
export function useProjects() {
  return useQuery({ queryKey: projectsKey, queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects')).projects });
}

/** The project of the current page (from /dashboard/p/:projectId/…). */
export function useProjectId(): string {
  const { projectId } = useParams();
  if (!projectId) throw new Error('useProjectId outside a project page');
  return projectId;
}

export function useProject() {
  const projectId = useProjectId();
  return useQuery({
    queryKey: projectKey(projectId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}', { params: { path: { projectId } } })).project,
  });
}

/** What the signed-in user may do on the current project. */
export function usePermissions(): Permissions {
  const { projectId } = useParams();
  return permissionsOf(useMe(), projectId);
}

const LAST_PROJECT = 'answerdesk.lastProject';
export function rememberProject(projectId: string): void {
  try {
    localStorage.setItem(LAST_PROJECT, projectId);
  } catch {
    // Storage may be disabled; the first project is then the default.
  }
}
export function lastProject(): string | null {
  try {
    return localStorage.getItem(LAST_PROJECT);
  } catch {
    return null;
  }
}
