import { ConfigError, loadDotEnv } from '../config.js';
import { HttpError, type ErrorDetail } from '../lib/errors.js';
import { formatDetails, terminalText } from './commands/shared.js';
import { UsageError, type CommandGroup } from './commands/types.js';

interface GroupEntry {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** Loaded only when the group runs: a command pays for its own imports, not every group's. */
  load: () => Promise<CommandGroup>;
}

/** Every command group. A new group is one file in ./commands and one line here. */
const groups: GroupEntry[] = [
  { name: 'serve', summary: 'Start the HTTP server (what npm start runs)', load: async () => (await import('./commands/serve.js')).serveCommand },
  { name: 'project', summary: 'Create, list, show, update and delete projects; rotate the HMAC secret', load: async () => (await import('./commands/project.js')).projectCommands },
  { name: 'key', summary: "Create, list and revoke a project's API keys", load: async () => (await import('./commands/key.js')).keyCommands },
  { name: 'knowledge', summary: 'Add, list, show, re-sync and delete knowledge sources', load: async () => (await import('./commands/knowledge.js')).knowledgeCommands },
  { name: 'action', summary: "Add, list, test and delete a project's custom actions", load: async () => (await import('./commands/action.js')).actionCommands },
  { name: 'skill', summary: "Add, list, update, enable, disable and delete a project's skills", load: async () => (await import('./commands/skill.js')).skillCommands },
  { name: 'conversation', summary: "List, read and close a project's conversations", load: async () => (await import('./commands/conversation.js')).conversationCommands },
  { name: 'activity', summary: "A project's latest messages; --follow watches them live", load: async () => (await import('./commands/insight.js')).activityCommand },
  { name: 'analytics', summary: 'Conversation, message and feedback counts of a project', load: async () => (await import('./commands/insight.js')).analyticsCommand },
  { name: 'user', summary: 'Add, list and remove dashboard users; give project roles; reset a password', load: async () => (await import('./commands/user.js')).userCommands },
  { name: 'eval', summary: 'Answer regression tests: run question cases and check the metrics (CI)', load: async () => (await import('./commands/evals.js')).evalCommands },
  { name: 'gaps', summary: 'Knowledge gaps: questions the agent could not answer; answer or dismiss them', load: async () => (await import('./commands/gaps.js')).gapCommands },
  { name: 'webhook', summary: "Add, list, test and delete a project's webhooks", load: async () => (await import('./commands/webhook.js')).webhookCommands },
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
    'Exit codes: 0 success, 1 failure, 2 usage error (also whatever the admin API would refuse with 400).',
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
  const entry = groups.find((g) => g.name === command);
  if (!entry) throw new UsageError(`Unknown command: ${command}`);
  const group = await entry.load();
  try {
    return await group.run(rest);
  } catch (err) {
    // What the admin API refuses with 400 is a usage error (exit 2), also when only the database
    // could judge it (a cursor, a source that cannot be synced): the input is wrong, not the run.
    if (err instanceof HttpError && err.statusCode === 400) throw new UsageError(describeFailure(err).replace(/^Error: /, ''), group.usage);
    throw err;
  }
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
      // A refused file's name or a JSON parser's excerpt of it can carry terminal controls too.
      process.stderr.write(`Error: ${terminalText(err.message)}\n\n${err.usage ?? usage()}`);
      process.exit(2);
    }
    // An error's message can quote stored or remote text.
    process.stderr.write(`${terminalText(describeFailure(err))}\n`);
    process.exit(1);
  },
);
