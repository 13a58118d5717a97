import { createApiKey, listApiKeys, revokeApiKey } from '../../api/projects/service.js';
import { getProject } from '../../projects/projects.js';
import { option, parseCommand, printJson, printTable, required, withStore } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk key create --project <projectId> [--kind public|secret] [--name <name>] [--json]
  answerdesk key list --project <projectId> [--json]
  answerdesk key revoke --project <projectId> <keyId> [--json]

create   Creates an API key (default kind: public) and prints it. It is shown only now.
list     Lists the project's keys: id, kind, name, display prefix, last use, revocation.
revoke   Revokes a key: it gets 401 on every endpoint from now on.

--json prints the same JSON as the admin API.
Works directly on the database named by DATABASE_URL.
`;

const KINDS = ['public', 'secret'] as const;

async function create(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const kind = option(cmd, 'kind') ?? 'public';
  if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be "public" or "secret", not "${kind}"`, usage);
  const name = option(cmd, 'name')?.trim() || undefined;
  if (name && name.length > 200) throw new UsageError('--name is longer than 200 characters', usage);
  const created = await withStore(async (store) => {
    await getProject(store.db, projectId);
    return createApiKey(store.db, projectId, { kind: kind as (typeof KINDS)[number], name });
  });
  if (cmd.values.json) {
    printJson(created);
    return 0;
  }
  process.stdout.write(
    [
      `Created ${created.key.kind} key ${created.key.id}${name ? ` ("${name}")` : ''} for project ${projectId}. It is shown only now:`,
      `  ${created.secret}`,
      '',
    ].join('\n'),
  );
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const keys = await withStore(async (store) => {
    await getProject(store.db, projectId);
    return listApiKeys(store.db, projectId);
  });
  if (cmd.values.json) printJson({ keys });
  else
    printTable(
      ['ID', 'KIND', 'NAME', 'KEY', 'LAST USED', 'REVOKED'],
      keys.map((k) => [k.id, k.kind, k.name ?? '-', k.prefix, k.lastUsedAt ?? 'never', k.revokedAt ?? '-']),
    );
  return 0;
}

async function revoke(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage, { min: 1, max: 1, names: '<keyId>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const key = await withStore(async (store) => {
    await getProject(store.db, projectId);
    return revokeApiKey(store.db, projectId, cmd.positionals[0]);
  });
  if (cmd.values.json) printJson({ key });
  else process.stdout.write(`Revoked ${key.kind} key ${key.id} (${key.prefix}) at ${key.revokedAt}.\n`);
  return 0;
}

export const keyCommands = subcommandGroup({
  name: 'key',
  usage,
  subcommands: { create, list, revoke },
});
