/** Thrown for a malformed command line; the CLI prints it with the group's usage and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** Usage text of the command group the error belongs to, printed after the message. */
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * One command group (`project`, `key`, …): its own file under src/cli/commands/, listed once in
 * src/cli/index.ts with its one-line summary (so the top-level help loads no group). `run` gets the
 * arguments after the group name and resolves to an exit code; a negative code means "keep
 * running" (the server).
 */
export interface CommandGroup {
  name: string;
  /** The group's full help text. */
  usage: string;
  run(args: string[]): Promise<number>;
}

/**
 * A group of named subcommands (`answerdesk key create …`): no subcommand, `help`, `--help` or `-h`
 * prints the usage; an unknown one is a usage error.
 */
export function subcommandGroup(group: {
  name: string;
  usage: string;
  subcommands: Record<string, (args: string[]) => Promise<number>>;
}): CommandGroup {
  const { name, usage, subcommands } = group;
  return {
    name,
    usage,
    async run([sub, ...rest]) {
      if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') return printUsage(usage);
      const command = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
      if (!command) throw new UsageError(`Unknown ${name} command: ${sub}`, usage);
      return command(rest);
    },
  };
}

/** Prints a group's usage for `--help`; exit code 0. */
export function printUsage(usage: string): number {
  process.stdout.write(usage);
  return 0;
}
