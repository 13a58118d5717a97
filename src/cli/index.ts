import { ConfigError } from '../config.js';
import { actionCommands } from './commands/action.js';
import { keyCommands } from './commands/key.js';
import { knowledgeCommands } from './commands/knowledge.js';
import { projectCommands } from './commands/project.js';
import { serveCommand } from './commands/serve.js';
import { UsageError, type CommandGroup } from './commands/types.js';

/** Every command group. A new group is one file in ./commands and one line here. */
const groups: CommandGroup[] = [
  serveCommand,
  projectCommands,
  keyCommands,
  actionCommands,
  knowledgeCommands,
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
    'Exit codes: 0 success, 1 failure, 2 usage error.',
    '',
  ].join('\n');
}

/** Resolves to the exit code; negative means the command keeps running (the server). */
async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  const group = groups.find((g) => g.name === command);
  if (!group) throw new UsageError(`Unknown command: ${command}`);
  return group.run(rest);
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
    // Not-found and similar service errors carry a message meant for people; anything else is
    // unexpected, and its message is still more useful than a stack for a command-line user.
    const message = err instanceof ConfigError ? err.message : `Error: ${(err as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);
