import { loadConfig } from '../../config.js';
import { parseCommand } from './shared.js';
import type { CommandGroup } from './types.js';

const usage = `Usage: answerdesk serve

Starts the HTTP server. Settings come from the environment (PORT, HOST, DATABASE_URL, REDIS_URL,
ANSWERDESK_ADMIN_TOKEN, …; see the README). On an empty database it creates a demo project and
prints its keys.
`;

export const serveCommand: CommandGroup = {
  name: 'serve',
  usage,
  async run(args) {
    if (parseCommand(args, {}, usage).help) {
      process.stdout.write(usage);
      return 0;
    }
    // Loaded on demand: the other commands need only the store, not the whole HTTP app.
    const { startServer } = await import('../../server.js');
    await startServer(loadConfig());
    return -1;
  },
};
