import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { acceptInvite, findInvite } from '../../accounts/invites.js';
import { createSession, endSession, findSession, pruneSessions, SESSION_MAX_MS, type ActiveSession } from '../../accounts/sessions.js';
import { completeSetup, setupRequired } from '../../accounts/setup.js';
import { API_PREFIX } from '../../http/auth.js';
import { clearSessionCookie, fromOwnOrigin, sessionToken, setSessionCookie } from '../../http/session-cookie.js';
import { Conflict, Forbidden, NotFound, Unauthorized, type HttpError } from '../../lib/errors.js';
import {
  acceptInviteBody,
  accountError,
  changePasswordBody,
  inviteLookup,
  inviteLookupQuery,
  loginBody,
  meResponse,
  setupBody,
  setupStatus,
  userWrapped,
} from './schema.js';
import { changePassword, INVALID_LOGIN, toSessionUser, verifyLogin } from './service.js';

const AUTH = `${API_PREFIX}/auth`;

/** A JSON body on a response declared with its headers (the session cookie), so sent as serialized text. */
function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * Dashboard sign-in: sessions, first-run setup, invite acceptance and password change. Public
 * routes (`auth: 'none'`) that read the session cookie themselves. Those that act on a session
 * refuse a request from another site (403), as the admin routes do; sign-in, setup and invite
 * acceptance refuse one that says it comes from another site.
 */
export const accountRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;
  const config = app.deps.config;

  /** The session the cookie names, or 401. */
  const currentSession = async (request: FastifyRequest): Promise<ActiveSession> => {
    const token = sessionToken(request);
    const session = token ? await findSession(db, token) : null;
    if (!session) throw Unauthorized();
    return session;
  };
  /** A write acting on the cookie must come from the dashboard's own origin. */
  const sameOrigin = (request: FastifyRequest) => {
    if (!fromOwnOrigin(request, config.ANSWERDESK_PUBLIC_URL)) throw Forbidden('Forbidden');
  };
  /** Sign-in forms may be posted by non-browser clients (no headers), never from another site. */
  const notCrossSite = (request: FastifyRequest) => {
    if (request.headers['sec-fetch-site'] === undefined && request.headers.origin === undefined) return;
    sameOrigin(request);
  };
  /** Starts the user's session; `gone`: the answer when the user was removed since they were read. */
  const signIn = async (request: FastifyRequest, reply: FastifyReply, userId: string, gone: () => HttpError) => {
    const session = await createSession(db, userId);
    if (!session) throw gone();
    setSessionCookie(request, reply, session, SESSION_MAX_MS);
  };

  app.post(`${AUTH}/login`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'login',
      summary: 'Sign in',
      description:
        'Checks the e-mail and password and starts a session: the `answerdesk_session` cookie (HttpOnly, SameSite=Lax, Path=/, Secure over https). ' +
        `A wrong password and an unknown e-mail answer the same 401 \`{"error":"${INVALID_LOGIN}"}\`. After 10 failures in 15 minutes for one e-mail, or from one address, sign-in answers 429 until the window ends.`,
      body: loginBody,
      response: {
        200: {
          description: 'Signed in; the session cookie is set.',
          headers: { 'Set-Cookie': z.string().describe('`answerdesk_session=…; Path=/; HttpOnly; SameSite=Lax`') },
          content: { 'application/json': { schema: userWrapped } },
        },
        401: accountError.describe(`\`{"error":"${INVALID_LOGIN}"}\``),
        403: accountError.describe('Posted from another site: `{"error":"Forbidden"}`.'),
        429: {
          description: 'Too many failed sign-ins for this e-mail or from this address: `{"error":"Rate limit exceeded"}`.',
          headers: { 'Retry-After': z.string().describe('Seconds until sign-in is tried again.') },
          content: { 'application/json': { schema: accountError } },
        },
      },
    },
    handler: async (request, reply) => {
      notCrossSite(request);
      const user = await verifyLogin(request, request.body.email, request.body.password);
      await pruneSessions(db);
      // Removed since the password was checked: the next try finds no such user.
      await signIn(request, reply, user.id, () => Unauthorized(INVALID_LOGIN));
      return sendJson(reply, 200, { user: toSessionUser(user) });
    },
  });

  app.post(`${AUTH}/logout`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'logout',
      summary: 'Sign out',
      description: 'Ends the session at once (on every node) and clears the cookie. Without a session it only clears the cookie.',
      response: {
        204: { description: 'Signed out.', headers: { 'Set-Cookie': z.string().describe('Clears `answerdesk_session`.') } },
        403: accountError.describe('Posted from another site: `{"error":"Forbidden"}`.'),
      },
    },
    handler: async (request, reply) => {
      const token = sessionToken(request);
      if (token) {
        sameOrigin(request);
        const session = await findSession(db, token);
        if (session) await endSession(db, session.idHash);
      }
      clearSessionCookie(request, reply);
      return reply.code(204).send();
    },
  });

  app.get(`${AUTH}/me`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'getMe',
      summary: 'The signed-in user',
      description: 'The user of the session cookie and their project roles; 401 without a live session.',
      response: { 200: meResponse, 401: accountError.describe('No live session: `{"error":"Unauthorized"}`.') },
    },
    handler: async (request) => {
      const session = await currentSession(request);
      return { user: toSessionUser(session.user), memberships: session.memberships };
    },
  });

  app.post(`${AUTH}/password`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'changePassword',
      summary: 'Change my password',
      description: 'Replaces the password of the signed-in user and ends their other sessions; this one stays. Wrong current passwords count toward the sign-in limit.',
      body: changePasswordBody,
      response: {
        204: z.null().describe('Changed.'),
        400: accountError.describe('`{"error":"Current password is incorrect"}`.'),
        401: accountError.describe('No live session.'),
        403: accountError.describe('Posted from another site: `{"error":"Forbidden"}`.'),
        429: {
          description: 'Too many wrong passwords for this e-mail: `{"error":"Rate limit exceeded"}`.',
          headers: { 'Retry-After': z.string() },
          content: { 'application/json': { schema: accountError } },
        },
      },
    },
    handler: async (request, reply) => {
      const session = await currentSession(request);
      sameOrigin(request);
      await changePassword(request, session, request.body.currentPassword, request.body.newPassword);
      return reply.code(204).send(null);
    },
  });

  app.get(`${AUTH}/setup`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'getSetupStatus',
      summary: 'Whether first-run setup is open',
      description: 'True until the first user exists; the server prints a one-time setup link at start while it is.',
      response: { 200: setupStatus },
    },
    handler: async () => ({ required: await setupRequired(db) }),
  });

  app.post(`${AUTH}/setup`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'completeSetup',
      summary: 'Create the first owner',
      description:
        'With a token printed by the server at start (`/dashboard/setup?token=…`), creates the first owner and signs them in. Works once: afterwards 409.',
      body: setupBody,
      response: {
        201: {
          description: 'The owner is created and signed in.',
          headers: { 'Set-Cookie': z.string().describe('The new session.') },
          content: { 'application/json': { schema: userWrapped } },
        },
        403: accountError.describe('`{"error":"Invalid setup token"}`, or posted from another site (`Forbidden`).'),
        409: accountError.describe('A user exists already: `{"error":"Setup is already done"}`.'),
      },
    },
    handler: async (request, reply) => {
      notCrossSite(request);
      const user = await completeSetup(db, request.body);
      await signIn(request, reply, user.id, () => Conflict('Setup is already done'));
      return sendJson(reply, 201, { user: toSessionUser(user) });
    },
  });

  app.get(`${AUTH}/invite`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'getInvite',
      summary: 'Read an invite link',
      description: 'Who the invite is for, so the page can show it before the person picks a name and password.',
      querystring: inviteLookupQuery,
      response: { 200: inviteLookup, 404: accountError.describe('`{"error":"Invite not found or expired"}` (also once used).') },
    },
    handler: async (request) => {
      const invite = await findInvite(db, request.query.token);
      return { email: invite.email, role: invite.role };
    },
  });

  app.post(`${AUTH}/invite`, {
    config: { auth: 'none' },
    schema: {
      tags: ['auth'],
      operationId: 'acceptInvite',
      summary: 'Accept an invite',
      description: "Creates the account with the invite's e-mail and roles, consumes the link and signs the new user in.",
      body: acceptInviteBody,
      response: {
        201: {
          description: 'The account is created and signed in.',
          headers: { 'Set-Cookie': z.string().describe('The new session.') },
          content: { 'application/json': { schema: userWrapped } },
        },
        403: accountError.describe('Posted from another site: `{"error":"Forbidden"}`.'),
        404: accountError.describe('`{"error":"Invite not found or expired"}` (also once used).'),
        409: accountError.describe('The e-mail has an account already.'),
      },
    },
    handler: async (request, reply) => {
      notCrossSite(request);
      const user = await acceptInvite(db, request.body.token, { name: request.body.name, password: request.body.password });
      // Removed as soon as made: the link is used up, as the next try finds.
      await signIn(request, reply, user.id, () => NotFound('Invite not found or expired'));
      return sendJson(reply, 201, { user: toSessionUser(user) });
    },
  });
};
