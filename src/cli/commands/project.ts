import { createProjectBody, patchProjectBody } from '../../api/projects/schema.js';
import { removeProject } from '../../api/projects/service.js';
import { loadConfig } from '../../config.js';
import type { Project } from '../../projects/project.js';
import { createProject, getProject, listProjects, rotateHmacSecret, updateProject } from '../../projects/projects.js';
import { jsonOption, option, parseCommand, parseInput, printJson, printTable, required, sealingBox, withStore } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk project create --name <name> [--settings <json>] [--json]
  answerdesk project list [--json]
  answerdesk project show <projectId> [--json]
  answerdesk project update <projectId> [--name <name>] [--settings <json>] [--json]
  answerdesk project rotate-hmac <projectId> [--json]
  answerdesk project delete <projectId> --yes

create       Creates a project with a public key, a secret key and an HMAC secret, and prints them.
             They are shown only now: only hashes of the keys are stored.
             --settings takes project settings as JSON, e.g. '{"allowedOrigins":["https://example.com"]}'.
list         Lists every project (id, name, creation time).
show         One project with its settings.
update       Renames the project and/or changes settings. Settings merge one level deep, as with
             PATCH /projects/{id}: '{"widget":{"primaryColor":"#0f766e"}}' keeps the other widget fields.
rotate-hmac  Generates a new HMAC secret and prints it once; signatures and identity tokens made with
             the old one stop verifying at once.
delete       Deletes the project and everything in it (keys, conversations, knowledge, actions,
             skills). Asks for --yes.

--json prints the same JSON as the admin API (POST /projects, GET /projects, GET|PATCH /projects/{id},
POST /projects/{id}/hmac-secret/rotate).
Works directly on the database named by DATABASE_URL.
`;

/** The `create`/`update` body from the command line, for the admin API's own schema to check. */
function projectInput(name: string | undefined, settings: string | undefined): Record<string, unknown> {
  if (name !== undefined && name.trim() === '') throw new UsageError('--name is empty', usage);
  if (name !== undefined && name.trim().length > 200) throw new UsageError('--name is longer than 200 characters', usage);
  return {
    ...(name !== undefined ? { name } : {}),
    ...(settings !== undefined ? { settings: jsonOption(settings, 'settings', usage) } : {}),
  };
}

function printProject(project: Project): void {
  process.stdout.write(
    [
      `Project "${project.name}" (${project.id}), created ${project.createdAt}, updated ${project.updatedAt}.`,
      `Settings: ${JSON.stringify(project.settings, null, 2)}`,
      '',
    ].join('\n'),
  );
}

async function create(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { name: { type: 'string' }, settings: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const input = parseInput(createProjectBody, projectInput(required(option(cmd, 'name'), 'name', usage), option(cmd, 'settings')), usage, '--settings');
  const created = await withStore(async (store) => createProject(store.db, await sealingBox(store, loadConfig()), input));
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

const ONE_PROJECT = { min: 1, max: 1, names: '<projectId>' };

async function show(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { json: { type: 'boolean' } }, usage, ONE_PROJECT);
  if (cmd.help) return printUsage(usage);
  const project = await withStore((store) => getProject(store.db, cmd.positionals[0]!));
  if (cmd.values.json) printJson({ project });
  else printProject(project);
  return 0;
}

async function update(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { name: { type: 'string' }, settings: { type: 'string' }, json: { type: 'boolean' } }, usage, ONE_PROJECT);
  if (cmd.help) return printUsage(usage);
  if (option(cmd, 'name') === undefined && option(cmd, 'settings') === undefined) throw new UsageError('Nothing to change: give --name and/or --settings', usage);
  const patch = parseInput(patchProjectBody, projectInput(option(cmd, 'name'), option(cmd, 'settings')), usage, '--settings');
  const project = await withStore((store) => updateProject(store.db, cmd.positionals[0]!, patch));
  if (cmd.values.json) printJson({ project });
  else printProject(project);
  return 0;
}

async function rotateHmac(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { json: { type: 'boolean' } }, usage, ONE_PROJECT);
  if (cmd.help) return printUsage(usage);
  const hmacSecret = await withStore(async (store) => rotateHmacSecret(store.db, await sealingBox(store, loadConfig()), cmd.positionals[0]!));
  if (cmd.values.json) printJson({ hmacSecret });
  else
    process.stdout.write(
      `New HMAC secret of project ${cmd.positionals[0]}, shown only now (the old one no longer verifies):\n  ${hmacSecret}\n`,
    );
  return 0;
}

async function remove(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { yes: { type: 'boolean' } }, usage, ONE_PROJECT);
  if (cmd.help) return printUsage(usage);
  if (!cmd.values.yes) throw new UsageError('Deleting a project deletes everything in it: add --yes to go ahead', usage);
  await withStore((store) => removeProject(store.db, cmd.positionals[0]!));
  process.stdout.write(`Deleted project ${cmd.positionals[0]} and everything in it.\n`);
  return 0;
}

export const projectCommands = subcommandGroup({
  name: 'project',
  usage,
  subcommands: { create, list, show, update, 'rotate-hmac': rotateHmac, delete: remove },
});
