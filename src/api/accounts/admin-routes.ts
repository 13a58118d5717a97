import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createInvite, listInvites, revokeInvite } from '../../accounts/invites.js';
import { listUsers, removeMembership, removeUser, setMembership, updateUser } from '../../accounts/users.js';
import { API_PREFIX, assertInstanceAdmin } from '../../http/auth.js';
import {
  accountError,
  adminUserWrapped,
  createInviteBody,
  inviteCreated,
  inviteList,
  inviteParams,
  membershipBody,
  membershipParams,
  patchUserBody,
  userList,
  userParams,
} from './schema.js';
import { inviteUrl, toAdminUser, toInvite } from './service.js';

const ADMIN = `${API_PREFIX}/admin`;
const ownerOnly = { 403: accountError.describe('Not an owner (a member, or a project secret key): `{"error":"Forbidden"}`.') };

/**
 * Users, their project roles and invites: instance-wide, so owners (and the instance admin token)
 * only. Removing a user or changing a password ends their sessions at once.
 */
export const accountAdminRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;
  const config = app.deps.config;
  const owner = { auth: 'admin', permission: 'owner' } as const;

  app.get(`${ADMIN}/users`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'listUsers',
      summary: 'List users',
      description: 'Every dashboard user with their project roles. Owners only.',
      response: { 200: userList, ...ownerOnly },
    },
    handler: async (request) => {
      assertInstanceAdmin(request);
      return { users: (await listUsers(db)).map(toAdminUser) };
    },
  });

  app.patch(`${ADMIN}/users/:userId`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'updateUser',
      summary: 'Update a user',
      description: 'Renames a user or changes their instance role (`owner` or `member`). Owners only.',
      params: userParams,
      body: patchUserBody,
      response: {
        200: adminUserWrapped,
        ...ownerOnly,
        404: accountError.describe('`{"error":"User not found"}`'),
        409: accountError.describe('The last owner cannot become a member.'),
      },
    },
    handler: async (request) => {
      assertInstanceAdmin(request);
      return { user: toAdminUser(await updateUser(db, request.params.userId, request.body)) };
    },
  });

  app.delete(`${ADMIN}/users/:userId`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'removeUser',
      summary: 'Remove a user',
      description: 'Deletes the user, their memberships and their sessions: they are signed out at once on every node. Owners only.',
      params: userParams,
      response: {
        204: z.null().describe('Removed.'),
        ...ownerOnly,
        404: accountError.describe('`{"error":"User not found"}`'),
        409: accountError.describe('The last owner cannot be removed.'),
      },
    },
    handler: async (request, reply) => {
      assertInstanceAdmin(request);
      await removeUser(db, request.params.userId);
      return reply.code(204).send(null);
    },
  });

  app.put(`${ADMIN}/users/:userId/memberships/:projectId`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'setMembership',
      summary: "Set a user's project role",
      description: 'Gives the user `admin`, `agent` or `viewer` on the project, replacing any role they had there. Owners only.',
      params: membershipParams,
      body: membershipBody,
      response: { 200: adminUserWrapped, ...ownerOnly, 404: accountError.describe('`User not found` or `Project not found`.') },
    },
    handler: async (request) => {
      assertInstanceAdmin(request);
      return { user: toAdminUser(await setMembership(db, request.params.userId, request.params.projectId, request.body.role)) };
    },
  });

  app.delete(`${ADMIN}/users/:userId/memberships/:projectId`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'removeMembership',
      summary: "Remove a user's project role",
      description: 'The user no longer reaches the project. Owners only.',
      params: membershipParams,
      response: { 204: z.null().describe('Removed.'), ...ownerOnly, 404: accountError.describe('`{"error":"Membership not found"}`') },
    },
    handler: async (request, reply) => {
      assertInstanceAdmin(request);
      await removeMembership(db, request.params.userId, request.params.projectId);
      return reply.code(204).send(null);
    },
  });

  app.post(`${ADMIN}/invites`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'createInvite',
      summary: 'Invite a user',
      description:
        'Makes a one-time link (valid 7 days) that lets the person pick a name and password and join with the given roles. The link is shown only in this response; a newer invite for the same e-mail replaces an older one. Owners only.',
      body: createInviteBody,
      response: {
        201: inviteCreated,
        ...ownerOnly,
        404: accountError.describe('`{"error":"Project not found"}`'),
        409: accountError.describe('The e-mail has an account already.'),
      },
    },
    handler: async (request, reply) => {
      assertInstanceAdmin(request);
      const caller = request.caller;
      const createdBy = caller?.type === 'user' ? caller.session.user.id : null;
      const { invite, token } = await createInvite(db, { ...request.body, createdBy });
      return reply.code(201).send({ invite: toInvite(invite), url: inviteUrl(config.ANSWERDESK_PUBLIC_URL, token) });
    },
  });

  app.get(`${ADMIN}/invites`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'listInvites',
      summary: 'List open invites',
      description: 'Invites not yet used or expired; never their links. Owners only.',
      response: { 200: inviteList, ...ownerOnly },
    },
    handler: async (request) => {
      assertInstanceAdmin(request);
      return { invites: (await listInvites(db)).map(toInvite) };
    },
  });

  app.delete(`${ADMIN}/invites/:inviteId`, {
    config: owner,
    schema: {
      tags: ['users'],
      operationId: 'revokeInvite',
      summary: 'Revoke an invite',
      description: 'Its link stops working at once. Owners only.',
      params: inviteParams,
      response: { 204: z.null().describe('Revoked.'), ...ownerOnly, 404: accountError.describe('`{"error":"Invite not found"}`') },
    },
    handler: async (request, reply) => {
      assertInstanceAdmin(request);
      await revokeInvite(db, request.params.inviteId);
      return reply.code(204).send(null);
    },
  });
};
