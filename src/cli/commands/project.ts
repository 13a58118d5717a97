import { projectSettingsSchema, type ProjectSettings } from '../../api/projects/schema.js';
import { createProject, listProjects } from '../../api/projects/service.js';
import { option, parseCommand, printJson, printTable, required, withStore } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk project create --name <name> [--settings <json>] [--json]
  answerdesk project list [--json]

create   Creates a project with a public key, a secret key and an HMAC secret, and prints them.
         They are shown only now: only hashes of the keys are stored.
         --settings takes project settings as JSON, e.g. '{"allowedOrigins":["https://example.com"]}'.
list     Lists every project (id, name, creation time).

--json prints the same JSON as the admin API (POST /projects, GET /projects).
Works directly on the database named by DATABASE_URL.
`;

function parseSettings(raw: string | undefined): ProjectSettings | undefined {
  if (raw === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new UsageError('--settings is not valid JSON', usage);
  }
  const parsed = projectSettingsSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  settings.${i.path.join('.')}: ${i.message}`);
    throw new UsageError(`Invalid --settings:\n${lines.join('\n')}`, usage);
  }
  return parsed.data;
}

async function create(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { name: { type: 'string' }, settings: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const name = required(option(cmd, 'name'), 'name', usage);
  if (name.length > 200) throw new UsageError('--name is longer than 200 characters', usage);
  const settings = parseSettings(option(cmd, 'settings'));
  const created = await withStore((store) => createProject(store.db, { name, settings }));
  if (cmd.values.json) {
    printJson(created);
    return 0;
  }
  process.stdout.write(
    [
      `Project "${created.project.name}" created. The keys are shown only now; keep them somewhere safe.`,
      `  project id   ${created.project.id}`,
      `  public key   ${created.publicKey}`,
      `  secret key   ${created.secretKey}`,
      `  HMAC secret  ${created.hmacSecret}`,
      '',
    ].join('\n'),
  );
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projects = await withStore((store) => listProjects(store.db));
  if (cmd.values.json) printJson({ projects });
  else if (projects.length === 0) process.stdout.write('No projects. Create one with: answerdesk project create --name <name>\n');
  else printTable(['ID', 'NAME', 'CREATED'], projects.map((p) => [p.id, p.name, p.createdAt]));
  return 0;
}

export const projectCommands = subcommandGroup({
  name: 'project',
  summary: 'Create and list projects',
  usage,
  subcommands: { create, list },
});
