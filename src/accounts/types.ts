/** Instance-wide role: an owner may do everything (users included); a member only what memberships give. */
export type UserRole = 'owner' | 'member';
/** Per-project role: admin configures the project, agent works its conversations, viewer reads. */
export type ProjectRole = 'admin' | 'agent' | 'viewer';

export const USER_ROLES = ['owner', 'member'] as const satisfies readonly UserRole[];
export const PROJECT_ROLES = ['admin', 'agent', 'viewer'] as const satisfies readonly ProjectRole[];

/**
 * What a route needs, declared on the route: read (GET), work (act on conversations), configure
 * (change the project), owner (instance-wide: projects, users, invites).
 */
export type Permission = 'read' | 'work' | 'configure' | 'owner';

export interface User {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  createdAt: string;
  updatedAt: string;
}

export interface Membership {
  projectId: string;
  role: ProjectRole;
}

export interface UserWithMemberships extends User {
  memberships: Membership[];
}

const GRANTS: Record<ProjectRole, readonly Permission[]> = {
  viewer: ['read'],
  agent: ['read', 'work'],
  admin: ['read', 'work', 'configure'],
};

/** Whether a project role allows a permission (owner-only permissions are never granted by a project role). */
export function roleAllows(role: ProjectRole, permission: Permission): boolean {
  return GRANTS[role].includes(permission);
}
