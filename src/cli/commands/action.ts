import { checkDefinition, deleteAction, findActionId, loadAction } from '../../actions/actions.js';
import { executeAction } from '../../actions/execute.js';
import { secretBox } from '../../lib/secret-box.js';
import { createActionBody } from '../../api/actions/schema.js';
import { createAction, listActions } from '../../api/actions/service.js';
import { loadConfig } from '../../config.js';
import type { ErrorDetail } from '../../lib/errors.js';
import { getProject } from '../../projects/projects.js';
import type { Store } from '../../store/index.js';
import { formatDetails, issueDetails, option, parseCommand, printJson, printTable, printText, readTextFile, required, sealingBox, withStore } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk action add --project <projectId> --file <action.json> [--json]
  answerdesk action list --project <projectId> [--json]
  answerdesk action test --project <projectId> <actionId|name> [--args <json>] [--json]
  answerdesk action delete --project <projectId> <actionId|name>

add      Creates an action from a JSON file ("-" reads standard input) with the admin API's fields:
         name, description, method, url, headers, parameters, query, body, examples, timeoutMs, enabled.
list     Lists the project's actions; secret header values are never shown.
test     Calls the action once with --args (a JSON object) and prints the request made and the
         response received, secrets masked. Exit code 1 when no response or a status of 400 or more.
delete   Deletes the action and its call log.

Works directly on the database named by DATABASE_URL, with the same secret key as the server
(ANSWERDESK_SECRET_KEY, or secret.key in the data directory).
`;

/**
 * The service's cross-field checks (URL placeholders, parameter lists, the JSON Schema) for a file
 * whose shape is already wrong elsewhere, so one run lists every problem. They need the fields they
 * read to be well formed; when one of those is not, its shape error says enough.
 */
function definitionDetails(raw: unknown, issues: Array<{ path: PropertyKey[] }>): ErrorDetail[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const shape = createActionBody.shape;
  const input = raw as Record<string, unknown>;
  const method = shape.method.safeParse(input.method);
  const url = shape.url.safeParse(input.url);
  const parameters = shape.parameters.safeParse(input.parameters);
  const query = shape.query.safeParse(input.query);
  const body = shape.body.safeParse(input.body);
  if (!method.success || !url.success || !parameters.success || !query.success || !body.success) return [];
  const reported = new Set(issues.map((i) => String(i.path[0])));
  return checkDefinition({ method: method.data, url: url.data, parameters: parameters.data, query: query.data, body: body.data }).filter(
    (d) => !reported.has(d.path.split('.')[0]!),
  );
}

/** An action id (`act_…`) or a name, resolved within the project. */
async function resolveId(store: Store, projectId: string, ref: string): Promise<string> {
  if (ref.startsWith('act_')) return ref;
  const id = await findActionId(store.db, projectId, ref);
  if (!id) throw new Error(`No action named "${ref}" in project ${projectId}`);
  return id;
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (err) {
    throw new UsageError(`Cannot read ${what} ${path}: ${(err as Error).message}`, usage);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} ${path} is not valid JSON: ${(err as Error).message}`, usage);
  }
}

async function add(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, file: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const file = required(option(cmd, 'file'), 'file', usage);
  const raw = readJson(file, 'file');
  const parsed = createActionBody.safeParse(raw);
  if (!parsed.success) {
    const details = [...issueDetails(parsed.error.issues), ...definitionDetails(raw, parsed.error.issues)];
    throw new UsageError(['Validation error', ...formatDetails(details)].join('\n'), usage);
  }
  const config = loadConfig();
  const action = await withStore(async (store) => {
    await getProject(store.db, projectId);
    return createAction(store.db, await sealingBox(store, config), projectId, parsed.data, { allowPrivateNetwork: config.ANSWERDESK_ALLOW_PRIVATE_NETWORK });
  });
  if (cmd.values.json) printJson({ action });
  else process.stdout.write(`Created action ${action.id} (${action.name}: ${action.method} ${action.url})${action.enabled ? '' : ', disabled'}.\n`);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const actions = await withStore(async (store) => {
    await getProject(store.db, projectId);
    return listActions(store.db, projectId);
  });
  if (cmd.values.json) printJson({ actions });
  else printTable(['ID', 'NAME', 'ENABLED', 'METHOD', 'URL'], actions.map((a) => [a.id, a.name, a.enabled ? 'yes' : 'no', a.method, a.url]));
  return 0;
}

async function test(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, args: { type: 'string' }, json: { type: 'boolean' } }, usage, { min: 1, max: 1, names: '<actionId|name>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  let input: unknown = {};
  const raw = option(cmd, 'args');
  if (raw !== undefined) {
    try {
      input = JSON.parse(raw);
    } catch {
      throw new UsageError('--args must be a JSON object', usage);
    }
  }
  const config = loadConfig();
  const result = await withStore(async (store) => {
    await getProject(store.db, projectId);
    const action = await loadAction(store.db, secretBox(config), projectId, await resolveId(store, projectId, cmd.positionals[0]!));
    return executeAction(action, input, { config, db: store.db, source: 'test', identity: { endUser: null, userTokens: {} } });
  });
  if (cmd.values.json) {
    printJson(result);
    return result.ok ? 0 : 1;
  }
  const out: string[] = [];
  if (result.request) {
    out.push(`> ${result.request.method} ${result.request.url}`, ...Object.entries(result.request.headers).map(([k, v]) => `> ${k}: ${v}`));
    if (result.request.body !== null) out.push(`> ${result.request.body}`);
    out.push('');
  }
  if (result.response) {
    out.push(`< ${result.response.status} (${result.latencyMs} ms)${result.response.truncated ? ', body cut at 1 MiB' : ''}`, result.response.forModel);
  }
  if (result.error) {
    out.push(`Failed: ${result.error.message}`, ...(result.error.details ?? []).map((d) => `  ${d.path || '(arguments)'}: ${d.message}`));
  }
  printText(`${out.join('\n')}\n`);
  return result.ok ? 0 : 1;
}

async function remove(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' } }, usage, { min: 1, max: 1, names: '<actionId|name>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const id = await withStore(async (store) => {
    await getProject(store.db, projectId);
    const actionId = await resolveId(store, projectId, cmd.positionals[0]!);
    await deleteAction(store.db, projectId, actionId);
    return actionId;
  });
  process.stdout.write(`Deleted action ${id}.\n`);
  return 0;
}

export const actionCommands = subcommandGroup({
  name: 'action',
  usage,
  subcommands: { add, list, test, delete: remove },
});
