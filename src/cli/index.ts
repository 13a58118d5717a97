import { ConfigError, loadConfig } from '../config.js';
import { startServer } from '../server.js';

const USAGE = `Usage: answerdesk <command> [options]

Commands:
  serve                         Start the HTTP server (the default)
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  void rest;
  switch (command) {
    case 'serve':
      await startServer(loadConfig());
      return -1;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`Unknown command: ${command}\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : `Error: ${(err as Error).message}`}\n`);
    process.exit(1);
  },
);
