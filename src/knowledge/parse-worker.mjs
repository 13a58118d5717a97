// The document parser's worker thread. Node does not run TypeScript by itself and a worker does
// not inherit a loader registered in code (as bin/answerdesk.js does), so this plain module
// registers tsx, the loader the whole project runs with (npm start, the CLI, vitest), and then
// loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./parse-worker.ts');
