import { gapsQuery, resolveGapBody } from '../../api/gaps/schema.js';
import { dismiss, listGaps, resolveGap } from '../../api/gaps/service.js';
import { getProject } from '../../projects/projects.js';
import { option, parseCommand, parseInput, printJson, printTable, printText, required, withDeps } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';

const usage = `Usage:
  answerdesk gaps list --project <projectId> [--days <n>] [--json]
  answerdesk gaps resolve --project <projectId> <gapId> --answer <text> [--json]
  answerdesk gaps dismiss --project <projectId> <gapId> [--json]

Knowledge gaps are the questions the agent declined, or whose answer was rated down, grouped when
they ask the same thing in other words.

list     Open gaps of the last --days days (1..365, default 30), most frequent first.
resolve  Adds the gap's question with --answer to the project's FAQ source of answers (created on
         first use) and marks the gap resolved; the agent answers it once the source is indexed
         (the server's ingestion worker does that).
dismiss  Hides the gap for good.

--json prints the same JSON as the admin API (GET /projects/{id}/gaps, POST …/gaps/{gapId}/resolve
and …/dismiss). Works directly on the database named by DATABASE_URL.
`;

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, days: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const { days } = parseInput(gapsQuery, { days: option(cmd, 'days') }, usage, 'options');
  const gaps = await withDeps(async (deps) => listGaps(deps, await getProject(deps.store.db, projectId), days));
  if (cmd.values.json) printJson({ gaps });
  else if (gaps.length === 0) process.stdout.write(`No open knowledge gaps in the last ${days} day(s).\n`);
  else {
    printTable(
      ['ID', 'COUNT', 'DECLINED', 'RATED DOWN', 'LAST ASKED', 'QUESTION'],
      gaps.map((g) => [g.id, String(g.count), String(g.reasons.declined), String(g.reasons.negativeFeedback), g.lastAskedAt, g.question]),
    );
  }
  return 0;
}

async function resolve(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, answer: { type: 'string' }, json: { type: 'boolean' } }, usage, { min: 1, max: 1, names: '<gapId>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const gapId = cmd.positionals[0]!.trim();
  const answer = option(cmd, 'answer');
  if (answer === undefined) throw new UsageError('Missing --answer', usage);
  const body = parseInput(resolveGapBody, { answer }, usage, 'options');
  const result = await withDeps(async (deps) => resolveGap(deps, await getProject(deps.store.db, projectId), gapId, body.answer));
  if (cmd.values.json) printJson(result);
  else printText(`Gap ${result.gap.id} resolved: the answer is in FAQ source ${result.source.id} (${result.source.title}), which is being indexed.\n`);
  return 0;
}

async function dismissCommand(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage, { min: 1, max: 1, names: '<gapId>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const gapId = cmd.positionals[0]!.trim();
  const gap = await withDeps(async (deps) => dismiss(deps, await getProject(deps.store.db, projectId), gapId));
  if (cmd.values.json) printJson({ gap });
  else process.stdout.write(`Gap ${gap.id} dismissed.\n`);
  return 0;
}

export const gapCommands = subcommandGroup({
  name: 'gaps',
  usage,
  subcommands: { list, resolve, dismiss: dismissCommand },
});
