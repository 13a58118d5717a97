import { ConfigError, loadDotEnv } from '../config.js';
import { HttpError, type ErrorDetail } from '../lib/errors.js';
import { actionCommands } from './commands/action.js';
import { conversationCommands } from './commands/conversation.js';
import { evalCommands } from './commands/evals.js';
import { gapCommands } from './commands/gaps.js';
import { activityCommand, analyticsCommand } from './commands/insight.js';
import { keyCommands } from './commands/key.js';
import { knowledgeCommands } from './commands/knowledge.js';
import { projectCommands } from './commands/project.js';
import { serveCommand } from './commands/serve.js';
import { skillCommands } from './commands/skill.js';
import { formatDetails } from './commands/shared.js';
import { userCommands } from './commands/user.js';
import { webhookCommands } from './commands/webhook.js';
import { UsageError, type CommandGroup } from './commands/types.js';

/** Every command group. A new group is one file in ./commands and one line here. */
const groups: CommandGroup[] = [
  serveCommand,
  projectCommands,
  keyCommands,
  knowledgeCommands,
  actionCommands,
  skillCommands,
  conversationCommands,
  activityCommand,
  analyticsCommand,
  userCommands,
  evalCommands,
  gapCommands,
  webhookCommands,
];

function usage(): string {
  const width = Math.max(...groups.map((g) => g.name.length)) + 2;
  return [
    'Usage: answerdesk <command> [options]',
    '',
    'Commands:',
    ...groups.map((g) => `  ${g.name.padEnd(width)}${g.summary}`),
    `  ${'help'.padEnd(width)}Show this help; "answerdesk <command> --help" shows a command's options`,
    '',
    'Without a command this help is printed (exit 0); "answerdesk serve" starts the server.',
    'Settings come from the environment and ./.env (see .env.example).',
    'Exit codes: 0 success, 1 failure, 2 usage error.',
    '',
  ].join('\n');
}

/** Resolves to the exit code; negative means the command keeps running (the server). */
async function main(argv: string[]): Promise<number> {
  // Settings in ./.env count as if they were in the environment (which wins).
  loadDotEnv();
  const [command, ...rest] = argv;
  // No command prints the help: starting a server is never a surprise (`answerdesk serve` does).
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  const group = groups.find((g) => g.name === command);
  if (!group) throw new UsageError(`Unknown command: ${command}`);
  return group.run(rest);
}

/** A service error (the admin API's 4xx) in the words the API would use, details one per line. */
function describeFailure(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof HttpError) {
    const details = (err.extra.details as ErrorDetail[] | undefined) ?? [];
    return [`Error: ${err.message}`, ...formatDetails(details)].join('\n');
  }
  // Unexpected: its message is still more useful than a stack for a command-line user.
  return `Error: ${(err as Error).message}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    if (err instanceof UsageError) {
      process.stderr.write(`Error: ${err.message}\n\n${err.usage ?? usage()}`);
      process.exit(2);
    }
    process.stderr.write(`${describeFailure(err)}\n`);
    process.exit(1);
  },
);
