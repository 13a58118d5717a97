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
 * src/cli/index.ts. `run` gets the arguments after the group name and resolves to an exit code;
 * a negative code means "keep running" (the server).
 */
export interface CommandGroup {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** The group's full help text. */
  usage: string;
  run(args: string[]): Promise<number>;
}
