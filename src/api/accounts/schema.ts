import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from '../../accounts/passwords.js';
import { PROJECT_ROLES, USER_ROLES } from '../../accounts/types.js';
import { errorSchema } from '../../http/error-schemas.js';

const email = z.string().trim().toLowerCase().max(254).pipe(z.email()).describe('E-mail address; compared without regard to case.');
const name = z.string().trim().min(1).max(200).describe('Full name, shown in the dashboard.');
export const passwordSchema = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(MAX_PASSWORD_LENGTH)
  .describe(`A new password: 10 to ${MAX_PASSWORD_LENGTH} characters.`);
const token = z.string().min(1).max(200).describe('The token from the link.');
const userRole = z.enum(USER_ROLES).describe('`owner`: everything on the instance, users included; `member`: only the projects of its memberships.');
const projectRole = z.enum(PROJECT_ROLES).describe('`admin`: configure the project; `agent`: read it and work its conversations; `viewer`: read only.');

export const membershipSchema = z
  .object({ projectId: z.string().describe('Project id (`proj_…`).'), role: projectRole })
  .meta({ id: 'Membership', description: "A user's role on one project." });

export const userSchema = z
  .object({
    id: z.string().describe('`user_…`'),
    email: z.string(),
    name: z.string(),
    role: userRole,
  })
  .meta({ id: 'SessionUser', description: 'A dashboard user.' });

export const userWrapped = z.object({ user: userSchema }).meta({ id: 'UserResponse', description: 'The signed-in user.' });

export const meResponse = z
  .object({ user: userSchema, memberships: z.array(membershipSchema).describe('Project roles; an owner reaches every project whatever these say.') })
  .meta({ id: 'Me', description: 'The signed-in user and their project roles.' });

export const loginBody = z
  .object({ email: z.string().max(254), password: z.string().max(MAX_PASSWORD_LENGTH) })
  .strict()
  .meta({ id: 'LoginRequest', description: 'E-mail and password.' });

export const setupStatus = z
  .object({ required: z.boolean().describe('True while no user exists: the first owner is still to be created.') })
  .meta({ id: 'SetupStatus', description: 'Whether first-run setup is open.' });

export const setupBody = z
  .object({ token, email, name, password: passwordSchema })
  .strict()
  .meta({ id: 'SetupRequest', description: 'The first owner, with the token printed by the server at start.' });

export const inviteLookupQuery = z.object({ token });
export const inviteLookup = z
  .object({ email: z.string(), role: userRole })
  .meta({ id: 'InviteLookup', description: 'Who an invite link is for.' });

export const acceptInviteBody = z
  .object({ token, name, password: passwordSchema })
  .strict()
  .meta({ id: 'AcceptInviteRequest', description: 'The new account: the invite gives the e-mail and the roles.' });

export const changePasswordBody = z
  .object({ currentPassword: z.string().max(MAX_PASSWORD_LENGTH), newPassword: passwordSchema })
  .strict()
  .meta({ id: 'ChangePasswordRequest', description: 'The current password and the new one.' });

export const accountError = errorSchema;

// Admin: users and invites.

export const adminUserSchema = z
  .object({
    id: z.string().describe('`user_…`'),
    email: z.string(),
    name: z.string(),
    role: userRole,
    createdAt: z.string().describe('ISO 8601 UTC'),
    memberships: z.array(membershipSchema),
  })
  .meta({ id: 'User', description: 'A dashboard user with their project roles.' });

export const userList = z.object({ users: z.array(adminUserSchema).describe('Oldest first.') }).meta({ id: 'UserList', description: 'Every dashboard user.' });
export const adminUserWrapped = z.object({ user: adminUserSchema }).meta({ id: 'AdminUserResponse', description: 'A dashboard user.' });

export const userParams = z.object({ userId: z.string().min(1).max(64).describe('User id (`user_…`).') });
export const membershipParams = userParams.extend({ projectId: z.string().min(1).max(64).describe('Project id (`proj_…`).') });

export const patchUserBody = z
  .object({ name, role: userRole })
  .partial()
  .strict()
  .meta({ id: 'UpdateUserRequest', description: 'Fields to change. The last owner cannot become a member.' });

export const membershipBody = z.object({ role: projectRole }).strict().meta({ id: 'MembershipRequest', description: 'The role to give on the project.' });

export const inviteSchema = z
  .object({
    id: z.string().describe('`inv_…`'),
    email: z.string(),
    role: userRole,
    projects: z.array(membershipSchema).describe('Project roles the new user gets.'),
    createdBy: z.string().nullable().describe('Id of the user who invited; null when made with the admin token.'),
    createdAt: z.string().describe('ISO 8601 UTC'),
    expiresAt: z.string().describe('ISO 8601 UTC; the link stops working then, or once used.'),
  })
  .meta({ id: 'Invite', description: 'An open invite (never its token).' });

export const createInviteBody = z
  .object({
    email,
    role: userRole,
    projects: z
      .array(z.object({ projectId: z.string().min(1).max(64).describe('Project id (`proj_…`).'), role: projectRole }).strict())
      .max(100)
      .superRefine((projects, ctx) => {
        // One role per project: accepting the invite keeps a single membership per project, so a
        // second entry would silently replace the first.
        const seen = new Set<string>();
        for (const [i, p] of projects.entries()) {
          if (seen.has(p.projectId)) {
            ctx.addIssue({ code: 'custom', path: [i, 'projectId'], message: `${p.projectId} is given more than once: give each project one role` });
          }
          seen.add(p.projectId);
        }
      })
      .default([])
      .describe('Project roles the new user gets (members; owners reach every project anyway), each project once.'),
  })
  .strict()
  .meta({ id: 'CreateInviteRequest', description: 'Who to invite and with which roles.' });

export const inviteCreated = z
  .object({
    invite: inviteSchema,
    url: z.string().describe('The one-time link, `/dashboard/invite?token=…` (absolute when ANSWERDESK_PUBLIC_URL is set); shown only now.'),
  })
  .meta({ id: 'InviteCreated', description: 'The invite and its link, shown only in this response.' });

export const inviteList = z.object({ invites: z.array(inviteSchema).describe('Newest first.') }).meta({ id: 'InviteList', description: 'Open invites.' });
export const inviteParams = z.object({ inviteId: z.string().min(1).max(64).describe('Invite id (`inv_…`).') });
