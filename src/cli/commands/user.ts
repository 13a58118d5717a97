import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { endUserSessions } from '../../accounts/sessions.js';
import { PROJECT_ROLES, USER_ROLES, type ProjectRole, type UserRole } from '../../accounts/types.js';
import { createUser, findUserByEmail, getUserWithMemberships, listUsers, removeUser, setMembership, setPassword } from '../../accounts/users.js';
import { passwordSchema } from '../../api/accounts/schema.js';
import { toAdminUser } from '../../api/accounts/service.js';
import { NotFound } from '../../lib/errors.js';
import { option, parseCommand, parseInput, printJson, printTable, required, withStore } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk user add --email <email> --name <name> --role owner|member --password-stdin [--json]
  answerdesk user add --email <email> --project <projectId> --role admin|agent|viewer
                      [--name <name> --password-stdin] [--json]
  answerdesk user list [--json]
  answerdesk user remove --email <email>
  answerdesk user reset-password --email <email> --password-stdin

add             Creates a dashboard user. With --project, gives the user a role on that project
                (admin: configure it, agent: work its conversations, viewer: read only); a user
                that does not exist yet is created as a member, which needs --name and the password.
list            Lists users with their instance role and project roles.
remove          Removes a user; their sessions end at once.
reset-password  Sets a new password and ends every session of the user.

Passwords are read from standard input (one line; a trailing newline is dropped), never from the
command line, where other users and the shell history would see them:
  printf '%s\\n' "$PASSWORD" | answerdesk user add --email ada@example.com --name Ada --role owner --password-stdin

--json prints the same JSON as the admin API. Works directly on the database named by DATABASE_URL.
`;

const emailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email());
const nameSchema = z.string().trim().min(1).max(200);

/** The password given on standard input: its first line, without the line break. */
function readPassword(flagGiven: boolean): string {
  if (!flagGiven) throw new UsageError('Missing --password-stdin: the password is read from standard input', usage);
  const text = readFileSync(0, 'utf8');
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return parseInput(passwordSchema, line, usage, 'password');
}

async function add(args: string[]): Promise<number> {
  const cmd = parseCommand(
    args,
    { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, project: { type: 'string' }, 'password-stdin': { type: 'boolean' }, json: { type: 'boolean' } },
    usage,
  );
  if (cmd.help) return printUsage(usage);
  const email = parseInput(emailSchema, required(option(cmd, 'email'), 'email', usage), usage, '--email');
  const role = required(option(cmd, 'role'), 'role', usage);
  const projectId = option(cmd, 'project');
  const withPassword = cmd.values['password-stdin'] === true;
  const nameOption = option(cmd, 'name');

  if (projectId === undefined) {
    if (!(USER_ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be "owner" or "member" (or give --project with admin, agent or viewer), not "${role}"`, usage);
    const name = parseInput(nameSchema, required(nameOption, 'name', usage), usage, '--name');
    const password = readPassword(withPassword);
    const user = await withStore((store) => createUser(store.db, { email, name, role: role as UserRole, password }));
    return report(user, cmd.values.json === true, `Created ${role} ${user.email} (${user.id}).`);
  }

  if (!(PROJECT_ROLES as readonly string[]).includes(role)) throw new UsageError(`With --project, --role must be "admin", "agent" or "viewer", not "${role}"`, usage);
  const projectRole = role as ProjectRole;
  const result = await withStore(async (store) => {
    const existing = await findUserByEmail(store.db, email);
    if (existing) return { user: await setMembership(store.db, existing.id, projectId, projectRole), created: false };
    if (nameOption === undefined || !withPassword) {
      throw new UsageError(`No user ${email} yet: give --name and --password-stdin to create one`, usage);
    }
    const name = parseInput(nameSchema, nameOption, usage, '--name');
    const password = readPassword(true);
    const user = await createUser(store.db, { email, name, role: 'member', password, memberships: [{ projectId, role: projectRole }] });
    return { user, created: true };
  });
  const what = result.created ? `Created member ${result.user.email} (${result.user.id}) as ${role} of ${projectId}.` : `${result.user.email} is now ${role} of ${projectId}.`;
  return report(result.user, cmd.values.json === true, what);
}

function report(user: Parameters<typeof toAdminUser>[0], json: boolean, message: string): number {
  if (json) printJson({ user: toAdminUser(user) });
  else process.stdout.write(`${message}\n`);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const users = await withStore((store) => listUsers(store.db));
  if (cmd.values.json) printJson({ users: users.map(toAdminUser) });
  else
    printTable(
      ['ID', 'EMAIL', 'NAME', 'ROLE', 'PROJECTS'],
      users.map((u) => [u.id, u.email, u.name, u.role, u.memberships.map((m) => `${m.projectId}:${m.role}`).join(', ') || '-']),
    );
  return 0;
}

async function userByEmail(store: Parameters<Parameters<typeof withStore>[0]>[0], email: string) {
  const user = await findUserByEmail(store.db, email);
  if (!user) throw NotFound('User not found');
  return getUserWithMemberships(store.db, user.id);
}

async function remove(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { email: { type: 'string' } }, usage);
  if (cmd.help) return printUsage(usage);
  const email = required(option(cmd, 'email'), 'email', usage);
  const user = await withStore(async (store) => {
    const found = await userByEmail(store, email);
    await removeUser(store.db, found.id);
    return found;
  });
  process.stdout.write(`Removed ${user.email} (${user.id}); their sessions have ended.\n`);
  return 0;
}

async function resetPassword(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const email = required(option(cmd, 'email'), 'email', usage);
  const password = readPassword(cmd.values['password-stdin'] === true);
  const user = await withStore(async (store) => {
    const found = await userByEmail(store, email);
    await setPassword(store.db, found.id, password);
    await endUserSessions(store.db, found.id);
    return found;
  });
  process.stdout.write(`New password set for ${user.email}; every session of theirs has ended.\n`);
  return 0;
}

export const userCommands = subcommandGroup({
  name: 'user',
  usage,
  subcommands: { add, list, remove, 'reset-password': resetPassword },
});
