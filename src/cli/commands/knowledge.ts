import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { createSourceBody, type KnowledgeSource } from '../../api/knowledge/schema.js';
import { createSource, deleteSource, fromBody, getSource, listSources, syncSource, type NewSource } from '../../api/knowledge/service.js';
import { getProject } from '../../api/projects/service.js';
import { loadConfig } from '../../config.js';
import type { AppDeps } from '../../http/context.js';
import { HttpError } from '../../lib/errors.js';
import { startKnowledgeWorker } from '../../knowledge/jobs.js';
import { createRateLimiter } from '../../limits/index.js';
import { option, parseCommand, printJson, printTable, required, withStore } from './shared.js';
import { UsageError, type CommandGroup } from './types.js';

const usage = `Usage:
  answerdesk knowledge add --project <projectId> <file|url|-> [--type <type>] [--title <title>]
                           [--depth <n>] [--max-pages <n>] [--sitemap] [--no-wait] [--json]
  answerdesk knowledge list --project <projectId> [--json]
  answerdesk knowledge show --project <projectId> <sourceId> [--json]
  answerdesk knowledge sync --project <projectId> <sourceId> [--no-wait] [--json]
  answerdesk knowledge delete --project <projectId> <sourceId>

add      A file (.md, .txt, .html, .pdf), a URL (one page; --depth n crawls same-site links n levels
         deep; --sitemap, or a URL ending in .xml, reads a sitemap) or "-" for standard input
         (--type text|markdown|html, default markdown). Waits for ingestion with a progress bar
         unless --no-wait; while it waits this process ingests too, so no server needs to run.
list     The project's sources with their status.
show     One source with its progress and error.
sync     Fetches a URL or sitemap source again; the old content stays searchable until done.
delete   Deletes the source and every chunk of it.

Works directly on the database named by DATABASE_URL.
`;

function failure(err: unknown): never {
  if (err instanceof HttpError) {
    const details = (err.extra.details as Array<{ path: string; message: string }> | undefined) ?? [];
    throw new Error([err.message, ...details.map((d) => `  ${d.path || '(body)'}: ${d.message}`)].join('\n'));
  }
  throw err;
}

function int(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} must be a whole number`, usage);
  return n;
}

/** Builds the new source from the command line: a URL, standard input, or a file by its extension. */
function sourceFromArgs(target: string, values: Record<string, string | boolean | undefined>): NewSource {
  const title = typeof values.title === 'string' ? values.title : undefined;
  const maxPages = int(values['max-pages'] as string | undefined, 'max-pages');
  if (/^https?:\/\//i.test(target)) {
    const sitemap = values.sitemap === true || /\.xml(\?|$)/i.test(target);
    const body = sitemap
      ? { type: 'sitemap' as const, url: target, title, maxPages }
      : { type: 'url' as const, url: target, title, maxDepth: int(values.depth as string | undefined, 'depth'), maxPages };
    const parsed = createSourceBody.safeParse(body);
    if (!parsed.success) throw new Error(`Invalid source: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return fromBody(parsed.data);
  }
  let data: Buffer;
  try {
    data = readFileSync(target === '-' ? 0 : target);
  } catch (err) {
    throw new Error(`Cannot read ${target}: ${(err as Error).message}`);
  }
  if (data.length === 0) throw new Error(`${target} is empty`);
  const ext = extname(target).toLowerCase();
  const given = typeof values.type === 'string' ? values.type : undefined;
  const type =
    given ??
    (ext === '.pdf' || data.subarray(0, 5).toString('latin1') === '%PDF-'
      ? 'pdf'
      : ext === '.html' || ext === '.htm'
        ? 'html'
        : ext === '.txt'
          ? 'text'
          : 'markdown');
  if (!['text', 'markdown', 'html', 'pdf'].includes(type)) throw new UsageError(`--type must be text, markdown, html or pdf`, usage);
  const name = target === '-' ? undefined : basename(target, ext);
  return {
    type: type as NewSource['type'],
    title: title ?? (type === 'markdown' ? undefined : name),
    payload: type === 'pdf' ? data.toString('base64') : data.toString('utf8'),
  };
}

/** `[#######-------]  7/14 pages, 96 chunks` on a terminal; nothing until the end otherwise. */
function renderProgress(source: KnowledgeSource): string {
  const { pagesDone, pagesTotal, chunksDone } = source.progress;
  const width = 24;
  const filled = pagesTotal ? Math.min(width, Math.round((pagesDone / pagesTotal) * width)) : (pagesDone % width);
  const bar = pagesTotal ? `${'#'.repeat(filled)}${'-'.repeat(width - filled)}` : `${'-'.repeat(filled)}#${'-'.repeat(width - filled - 1)}`;
  return `[${bar}] ${source.status.padEnd(10)} ${pagesDone}${pagesTotal ? `/${pagesTotal}` : ''} pages, ${chunksDone} chunks`;
}

/** Waits for the source to be ready or failed, ingesting in this process meanwhile. */
async function waitFor(deps: AppDeps, projectId: string, sourceId: string): Promise<KnowledgeSource> {
  const tty = process.stderr.isTTY === true;
  const worker = startKnowledgeWorker(deps, { pollMs: 200 });
  try {
    for (;;) {
      const source = await getSource(deps.store.db, projectId, sourceId);
      if (tty) process.stderr.write(`\r${renderProgress(source)}\x1b[K`);
      if (source.status === 'ready' || source.status === 'failed') {
        if (tty) process.stderr.write('\n');
        return source;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await worker.stop();
  }
}

function describe(source: KnowledgeSource): string {
  const what = source.title ?? source.url ?? source.type;
  if (source.status === 'failed') return `Source ${source.id} (${what}) failed: ${source.error}`;
  return `Source ${source.id} (${what}) is ${source.status}: ${source.chunkCount} chunks from ${source.progress.pagesDone} page(s)${source.error ? `; ${source.error}` : ''}.`;
}

/** The deps a CLI command needs to ingest: the database and the config (no HTTP, a local limiter). */
async function withDeps<T>(fn: (deps: AppDeps) => Promise<T>): Promise<T> {
  return withStore(async (store) => {
    const limiter = await createRateLimiter(undefined);
    try {
      return await fn({ config: loadConfig(), store, limiter });
    } finally {
      await limiter.close();
    }
  });
}

async function finish(deps: AppDeps, projectId: string, created: KnowledgeSource, values: Record<string, string | boolean | undefined>): Promise<number> {
  const source = values['no-wait'] ? created : await waitFor(deps, projectId, created.id);
  if (values.json) printJson({ source });
  else process.stdout.write(`${describe(source)}\n`);
  return source.status === 'failed' ? 1 : 0;
}

const flags = {
  project: { type: 'string' },
  type: { type: 'string' },
  title: { type: 'string' },
  depth: { type: 'string' },
  'max-pages': { type: 'string' },
  sitemap: { type: 'boolean' },
  'no-wait': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

function help(): number {
  process.stdout.write(usage);
  return 0;
}

async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') return help();
  const oneArg = { min: 1, max: 1, names: sub === 'add' ? '<file|url|->' : '<sourceId>' };
  const cmd = parseCommand(rest, flags, usage, sub === 'list' ? { min: 0, max: 0 } : oneArg);
  if (cmd.help) return help();
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const [target] = cmd.positionals;
  return withDeps(async (deps) => {
    await getProject(deps.store.db, projectId).catch(failure);
    switch (sub) {
      case 'add': {
        const created = await createSource(deps, projectId, sourceFromArgs(target!, cmd.values)).catch(failure);
        return finish(deps, projectId, created, cmd.values);
      }
      case 'sync': {
        const queued = await syncSource(deps, projectId, target!).catch(failure);
        return finish(deps, projectId, queued, cmd.values);
      }
      case 'list': {
        const sources = await listSources(deps.store.db, projectId);
        if (cmd.values.json) printJson({ sources });
        else if (sources.length === 0) process.stdout.write('No knowledge sources.\n');
        else printTable(['ID', 'TYPE', 'STATUS', 'CHUNKS', 'TITLE'], sources.map((s) => [s.id, s.type, s.status, String(s.chunkCount), s.title ?? s.url ?? '']));
        return 0;
      }
      case 'show': {
        const source = await getSource(deps.store.db, projectId, target!).catch(failure);
        if (cmd.values.json) printJson({ source });
        else process.stdout.write(`${describe(source)}\n`);
        return 0;
      }
      case 'delete':
        await deleteSource(deps.store.db, projectId, target!).catch(failure);
        process.stdout.write(`Deleted source ${target} and its chunks.\n`);
        return 0;
      default:
        throw new UsageError(`Unknown knowledge command: ${sub}`, usage);
    }
  });
}

export const knowledgeCommands: CommandGroup = {
  name: 'knowledge',
  summary: 'Add, list, show, re-sync and delete knowledge sources',
  usage,
  run,
};
