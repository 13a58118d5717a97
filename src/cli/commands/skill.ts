import { createSkillBody, patchSkillBody, type Skill } from '../../api/skills/schema.js';
import { createSkill, listSkills, updateSkill } from '../../api/skills/service.js';
import { getProject } from '../../projects/projects.js';
import { deleteSkill } from '../../skills/skills.js';
import { option, parseCommand, parseInput, printJson, printTable, readTextFile, required, withStore, type ParsedCommand } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk skill add --project <projectId> --name <name> [--description <text>]
                       [--instructions <text> | --instructions-file <path>] [--disabled] [--json]
  answerdesk skill list --project <projectId> [--json]
  answerdesk skill update --project <projectId> <skillId> [--name <name>] [--description <text>]
                          [--instructions <text> | --instructions-file <path>] [--json]
  answerdesk skill enable --project <projectId> <skillId> [--json]
  answerdesk skill disable --project <projectId> <skillId> [--json]
  answerdesk skill delete --project <projectId> <skillId>

A skill is a named workflow the agent offers (the widget lists enabled skills) and follows: its
instructions join the system prompt while it is enabled.

add      Creates a skill, enabled unless --disabled. "--instructions-file -" reads standard input.
list     The project's skills, oldest first.
update   Changes the fields given.
enable   Offers the skill again; disable stops offering it (it is kept).
delete   Deletes the skill.

--json prints the same JSON as the admin API (POST|GET /projects/{id}/skills, PATCH …/{skillId}).
Works directly on the database named by DATABASE_URL.
`;

const fields = {
  project: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  instructions: { type: 'string' },
  'instructions-file': { type: 'string' },
  json: { type: 'boolean' },
} as const;
const ONE_SKILL = { min: 1, max: 1, names: '<skillId>' };

/** --instructions, or the text of --instructions-file ("-" is standard input). */
function instructions(cmd: ParsedCommand): string | undefined {
  const text = option(cmd, 'instructions');
  const file = option(cmd, 'instructions-file');
  if (text !== undefined && file !== undefined) throw new UsageError('Give --instructions or --instructions-file, not both', usage);
  if (file === undefined) return text;
  try {
    return readTextFile(file);
  } catch (err) {
    throw new UsageError(`Cannot read ${file}: ${(err as Error).message}`, usage);
  }
}

/** The fields given on the command line, as the admin API's body would carry them. */
function body(cmd: ParsedCommand): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['name', 'description'] as const) {
    const value = option(cmd, key);
    if (value !== undefined) out[key] = value;
  }
  const text = instructions(cmd);
  if (text !== undefined) out.instructions = text;
  return out;
}

function printSkill(verb: string, skill: Skill): void {
  // "Disabled skill …" says it already; after any other verb a disabled skill is marked.
  const state = skill.enabled || verb === 'Disabled' ? '' : ', disabled';
  process.stdout.write(`${verb} skill ${skill.id} ("${skill.name}")${state}.\n`);
}

/** Runs `fn` on the store once the project is known (a clear "Project not found" otherwise). */
function onProject<T>(projectId: string, fn: (db: Parameters<typeof getProject>[0]) => Promise<T>): Promise<T> {
  return withStore(async (store) => {
    await getProject(store.db, projectId);
    return fn(store.db);
  });
}

async function add(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { ...fields, disabled: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  required(option(cmd, 'name'), 'name', usage);
  const input = parseInput(createSkillBody, { ...body(cmd), enabled: !cmd.values.disabled }, usage, 'skill');
  const skill = await onProject(projectId, (db) => createSkill(db, projectId, input));
  if (cmd.values.json) printJson({ skill });
  else printSkill('Created', skill);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: fields.project, json: fields.json }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const skills = await onProject(projectId, (db) => listSkills(db, projectId));
  if (cmd.values.json) printJson({ skills });
  else if (skills.length === 0) process.stdout.write('No skills. Add one with: answerdesk skill add --project <projectId> --name <name>\n');
  else printTable(['ID', 'NAME', 'ENABLED', 'DESCRIPTION'], skills.map((s) => [s.id, s.name, s.enabled ? 'yes' : 'no', s.description]));
  return 0;
}

/** update, enable and disable: a PATCH of the skill named by the one argument. */
function patchCommand(verb: string, fixed: Record<string, unknown> | null) {
  return async (args: string[]): Promise<number> => {
    const cmd = parseCommand(args, fixed ? { project: fields.project, json: fields.json } : fields, usage, ONE_SKILL);
    if (cmd.help) return printUsage(usage);
    const projectId = required(option(cmd, 'project'), 'project', usage);
    const given = fixed ?? body(cmd);
    if (Object.keys(given).length === 0) throw new UsageError('Nothing to change: give --name, --description or --instructions', usage);
    const patch = parseInput(patchSkillBody, given, usage, 'skill');
    const skill = await onProject(projectId, (db) => updateSkill(db, projectId, cmd.positionals[0]!, patch));
    if (cmd.values.json) printJson({ skill });
    else printSkill(verb, skill);
    return 0;
  };
}

async function remove(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: fields.project }, usage, ONE_SKILL);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  await onProject(projectId, (db) => deleteSkill(db, projectId, cmd.positionals[0]!));
  process.stdout.write(`Deleted skill ${cmd.positionals[0]}.\n`);
  return 0;
}

export const skillCommands = subcommandGroup({
  name: 'skill',
  usage,
  subcommands: {
    add,
    list,
    update: patchCommand('Updated', null),
    enable: patchCommand('Enabled', { enabled: true }),
    disable: patchCommand('Disabled', { enabled: false }),
    delete: remove,
  },
});
