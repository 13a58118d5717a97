import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { createSourceBody, type KnowledgeSource } from '../../api/knowledge/schema.js';
import { checkSourceUrl, createSource, deleteSource, fromBody, getSource, listSources, sourceFromFile, syncSource } from '../../api/knowledge/service.js';
import type { AppDeps } from '../../deps.js';
import { startKnowledgeWorker } from '../../knowledge/jobs.js';
import type { NewSource } from '../../knowledge/sources.js';
import { HttpError, type ErrorDetail } from '../../lib/errors.js';
import { getProject } from '../../projects/projects.js';
import { option, parseCommand, printJson, printTable, printText, required, wholeNumber, withDeps } from './shared.js';
import { UsageError, type CommandGroup } from './types.js';

const usage = `Usage:
  answerdesk knowledge add --project <projectId> <file|folder|glob|url|->... [--type <type>] [--title <title>]
                           [--depth <n>] [--max-pages <n>] [--sitemap] [--no-wait] [--json]
  answerdesk knowledge list --project <projectId> [--json]
  answerdesk knowledge show --project <projectId> <sourceId> [--json]
  answerdesk knowledge sync --project <projectId> <sourceId> [--no-wait] [--json]
  answerdesk knowledge delete --project <projectId> <sourceId>

add      Files (.md, .markdown, .txt, .html, .htm, .pdf), folders (every such file in them, at any
         depth; other files are skipped and listed), quoted globs ('docs/**/*.md'), a URL (one page;
         --depth n crawls same-site links n levels deep; --sitemap, or a URL ending in .xml, reads a
         sitemap) or "-" for standard input (--type text|markdown|html, default markdown). Several
         may be given; each file becomes one source. A file AnswerDesk cannot read (a Word
         document, an image) is refused before anything is added. Waits for ingestion, showing
         each file as it is done and the chunks written so far, unless --no-wait; while it waits
         this process ingests too, so no server needs to run.
list     The project's sources with their status.
show     One source with its progress and error.
sync     Fetches a URL or sitemap source again; the old content stays searchable until done.
delete   Deletes the source and every chunk of it.

--json prints the admin API's {source} (one source) or {sources, skipped} (several).
Works directly on the database named by DATABASE_URL.
`;

const TEXT_TYPES = ['text', 'markdown', 'html', 'pdf'] as const;

/** One thing to add: a URL, standard input, or a file (named, or found in a folder or by a glob). */
type Target = { kind: 'url'; url: string } | { kind: 'stdin' } | { kind: 'file'; path: string; named: boolean };

/** A file that was found in a folder or by a glob but cannot be read, and why. */
interface Skipped {
  path: string;
  reason: string;
}

function label(target: Target): string {
  return target.kind === 'url' ? target.url : target.kind === 'stdin' ? 'standard input' : relative(process.cwd(), target.path) || target.path;
}

/**
 * The command line's targets as a list of sources to add: folders are walked (hidden files and
 * node_modules left out), globs expanded, in a stable order, each file once.
 */
async function resolveTargets(args: string[]): Promise<Target[]> {
  const targets: Target[] = [];
  const seen = new Set<string>();
  const addFile = (path: string, named: boolean) => {
    const full = resolve(path);
    if (seen.has(full)) return;
    seen.add(full);
    targets.push({ kind: 'file', path: full, named });
  };
  for (const arg of args) {
    if (/^https?:\/\//i.test(arg)) targets.push({ kind: 'url', url: arg });
    else if (arg === '-') {
      if (targets.some((t) => t.kind === 'stdin')) throw new UsageError('"-" (standard input) can be given once', usage);
      targets.push({ kind: 'stdin' });
    } else if (existsSync(arg) && statSync(arg).isDirectory()) {
      const files = await glob('**/*', { cwd: arg, absolute: true, onlyFiles: true, ignore: ['**/node_modules/**'] });
      if (files.length === 0) throw new Error(`${arg} holds no files`);
      for (const file of files.sort()) addFile(file, false);
    } else if (existsSync(arg)) addFile(arg, true);
    else if (isDynamicPattern(arg)) {
      const files = await glob(arg, { absolute: true, onlyFiles: true, ignore: ['**/node_modules/**'] });
      if (files.length === 0) throw new Error(`No files match ${arg}`);
      for (const file of files.sort()) addFile(file, false);
    } else throw new UsageError(`Cannot read ${arg}: no such file or directory`, usage);
  }
  return targets;
}

/**
 * A target as a new source, with the same typing and refusals as the upload route
 * (sourceFromFile). Reading is repeated when the source is created, so only one file's content is
 * held at a time.
 */
function sourceFor(target: Target, values: Record<string, string | boolean | undefined>): NewSource {
  const title = typeof values.title === 'string' ? values.title : undefined;
  const maxPages = wholeNumber(values['max-pages'] as string | undefined, 'max-pages', usage);
  if (target.kind === 'url') {
    const sitemap = values.sitemap === true || /\.xml(\?|$)/i.test(target.url);
    const body = sitemap
      ? { type: 'sitemap' as const, url: target.url, title, maxPages }
      : { type: 'url' as const, url: target.url, title, maxDepth: wholeNumber(values.depth as string | undefined, 'depth', usage), maxPages };
    const parsed = createSourceBody.safeParse(body);
    if (!parsed.success) throw new Error(`Invalid source: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return fromBody(parsed.data);
  }
  const given = typeof values.type === 'string' ? values.type : undefined;
  if (given !== undefined && !(TEXT_TYPES as readonly string[]).includes(given)) throw new UsageError('--type must be text, markdown, html or pdf', usage);
  const type = given as (typeof TEXT_TYPES)[number] | undefined;
  let data: Buffer;
  try {
    // Standard input can be read once: kept for the second reading.
    data = target.kind === 'stdin' ? (stdinData ??= readFileSync(0)) : readFileSync(target.path);
  } catch (err) {
    throw new Error(`Cannot read ${label(target)}: ${(err as Error).message}`);
  }
  if (target.kind === 'stdin') return sourceFromFile('stdin', data, { type: type ?? 'markdown', title });
  return sourceFromFile(basename(target.path), data, { type, title });
}

let stdinData: Buffer | undefined;

/** A service refusal (400) as the reason a file cannot be added. */
function reasonOf(err: unknown): string {
  const details = err instanceof HttpError ? ((err.extra.details as ErrorDetail[] | undefined) ?? []) : [];
  if (details.length > 0) return details.map((d) => `${d.path}: ${d.message}`).join('; ');
  if (err instanceof HttpError || err instanceof Error) return err.message;
  throw err;
}

const BAR_WIDTH = 24;

function bar(done: number, total: number | null): string {
  if (!total) return `[${'-'.repeat(BAR_WIDTH)}]`;
  const filled = Math.min(BAR_WIDTH, Math.round((done / total) * BAR_WIDTH));
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

/**
 * One source: `[#######-----------------] processing  7/14 pages, 96 chunks`. Chunks count up
 * within a long page too: they (and their embeddings) are what takes time.
 */
function renderOne(source: KnowledgeSource): string {
  const { pagesDone, pagesTotal, chunksDone } = source.progress;
  return `${bar(pagesDone, pagesTotal)} ${source.status.padEnd(10)} ${pagesDone}${pagesTotal ? `/${pagesTotal}` : ''} pages, ${chunksDone} chunks`;
}

/** Several: `[######------------------] 3/12 sources done, 240 chunks · docs/manual.pdf: 96 chunks`. */
function renderMany(sources: KnowledgeSource[], labels: Map<string, string>): string {
  const done = sources.filter((s) => s.status === 'ready' || s.status === 'failed').length;
  const chunks = sources.reduce((n, s) => n + (s.status === 'ready' ? s.chunkCount : s.progress.chunksDone), 0);
  const current = sources.find((s) => s.status === 'processing');
  const now = current ? ` · ${labels.get(current.id)}: ${current.progress.chunksDone} chunks` : '';
  return `${bar(done, sources.length)} ${done}/${sources.length} sources done, ${chunks} chunks${now}`;
}

/**
 * Waits until every source is ready or failed, ingesting in this process meanwhile. With several,
 * each is reported on its own line as it finishes; on a terminal a progress line follows them.
 */
async function waitForAll(deps: AppDeps, projectId: string, created: KnowledgeSource[], labels: Map<string, string>, quiet = false): Promise<KnowledgeSource[]> {
  const tty = process.stderr.isTTY === true;
  const many = created.length > 1 && !quiet;
  const ids = new Set(created.map((s) => s.id));
  const reported = new Set<string>();
  const worker = startKnowledgeWorker(deps, { pollMs: 200 });
  try {
    for (;;) {
      const current = (await listSources(deps.store.db, projectId)).filter((s) => ids.has(s.id));
      const sources = created.map((c) => current.find((s) => s.id === c.id) ?? c);
      if (tty) process.stderr.write('\r\x1b[K');
      if (many) {
        for (const s of sources) {
          if ((s.status === 'ready' || s.status === 'failed') && !reported.has(s.id)) {
            reported.add(s.id);
            printText(`${fileLine(s, labels.get(s.id)!)}\n`);
          }
        }
      }
      if (sources.every((s) => s.status === 'ready' || s.status === 'failed')) return sources;
      if (tty) process.stderr.write(created.length > 1 ? renderMany(sources, labels) : renderOne(sources[0]!));
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await worker.stop();
  }
}

function fileLine(source: KnowledgeSource, name: string): string {
  if (source.status === 'failed') return `failed  ${name} (${source.id}): ${source.error}`;
  return `${source.status.padEnd(7)} ${name} (${source.id}): ${source.chunkCount} chunks${source.error ? `; ${source.error}` : ''}`;
}

function describe(source: KnowledgeSource): string {
  const what = source.title ?? source.url ?? source.type;
  if (source.status === 'failed') return `Source ${source.id} (${what}) failed: ${source.error}`;
  return `Source ${source.id} (${what}) is ${source.status}: ${source.chunkCount} chunks from ${source.progress.pagesDone} page(s)${source.error ? `; ${source.error}` : ''}.`;
}

async function finish(deps: AppDeps, projectId: string, created: KnowledgeSource, values: Record<string, string | boolean | undefined>): Promise<number> {
  const [source] = values['no-wait'] ? [created] : await waitForAll(deps, projectId, [created], new Map([[created.id, created.title ?? created.id]]));
  if (values.json) printJson({ source });
  else printText(`${describe(source!)}\n`);
  return source!.status === 'failed' ? 1 : 0;
}

/**
 * `add`: every target is checked before anything is stored (a named file AnswerDesk cannot read
 * stops the command; one found in a folder or by a glob is skipped and listed), then each becomes
 * a source and the command waits for them.
 */
async function add(deps: AppDeps, projectId: string, targets: Target[], values: Record<string, string | boolean | undefined>): Promise<number> {
  const errors: string[] = [];
  const skipped: Skipped[] = [];
  const accepted: Target[] = [];
  for (const target of targets) {
    try {
      checkSourceUrl(sourceFor(target, values), deps.config.ANSWERDESK_ALLOW_PRIVATE_NETWORK);
      accepted.push(target);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const reason = reasonOf(err);
      if (target.kind === 'file' && !target.named) skipped.push({ path: label(target), reason });
      else errors.push(`${label(target)}: ${reason}`);
    }
  }
  if (errors.length > 0) throw new UsageError(`Nothing was added:\n${errors.map((e) => `  ${e}`).join('\n')}`, usage);
  if (accepted.length === 0) throw new Error(`None of the files can be read:\n${skipped.map((f) => `  ${f.path}: ${f.reason}`).join('\n')}`);
  if (skipped.length > 0) {
    process.stderr.write(`Skipped ${skipped.length} file(s) AnswerDesk cannot read:\n${skipped.map((f) => `  ${f.path}: ${f.reason}`).join('\n')}\n`);
  }
  // One named file, URL or standard input answers as before ({source}); folders and globs list.
  const single = targets.length === 1 && !(targets[0]!.kind === 'file' && !targets[0]!.named);
  if (single) return finish(deps, projectId, await createSource(deps, projectId, sourceFor(accepted[0]!, values)), values);

  const labels = new Map<string, string>();
  const created: KnowledgeSource[] = [];
  for (const target of accepted) {
    const source = await createSource(deps, projectId, sourceFor(target, values));
    labels.set(source.id, label(target));
    created.push(source);
  }
  if (!values.json && !values['no-wait']) process.stdout.write(`Added ${created.length} sources; ingesting them now.\n`);
  const sources = values['no-wait'] ? created : await waitForAll(deps, projectId, created, labels, values.json === true);
  const failed = sources.filter((s) => s.status === 'failed').length;
  if (values.json) printJson({ sources, skipped });
  else if (values['no-wait']) for (const s of sources) process.stdout.write(`pending ${labels.get(s.id)} (${s.id})\n`);
  else {
    const chunks = sources.reduce((n, s) => n + s.chunkCount, 0);
    process.stdout.write(`${sources.length - failed} of ${sources.length} sources ready, ${chunks} chunks${failed ? `; ${failed} failed` : ''}${skipped.length ? `; ${skipped.length} file(s) skipped` : ''}.\n`);
  }
  return failed > 0 ? 1 : 0;
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
  const positionals =
    sub === 'list' ? { min: 0, max: 0 } : sub === 'add' ? { min: 1, max: Infinity, names: '<file|folder|glob|url|->' } : { min: 1, max: 1, names: '<sourceId>' };
  const cmd = parseCommand(rest, flags, usage, positionals);
  if (cmd.help) return help();
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const [target] = cmd.positionals;
  // What to add is known before the database is opened: a usage error never touches it.
  const targets = sub === 'add' ? await resolveTargets(cmd.positionals) : [];
  if (targets.length > 1 && typeof cmd.values.title === 'string') throw new UsageError('--title names one source; with several, each file takes its own name', usage);
  return withDeps(async (deps) => {
    await getProject(deps.store.db, projectId);
    switch (sub) {
      case 'add':
        return add(deps, projectId, targets, cmd.values);
      case 'sync': {
        const queued = await syncSource(deps, projectId, target!);
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
        const source = await getSource(deps.store.db, projectId, target!);
        if (cmd.values.json) printJson({ source });
        else printText(`${describe(source)}\n`);
        return 0;
      }
      case 'delete':
        await deleteSource(deps.store.db, projectId, target!);
        process.stdout.write(`Deleted source ${target} and its chunks.\n`);
        return 0;
      default:
        throw new UsageError(`Unknown knowledge command: ${sub}`, usage);
    }
  });
}

export const knowledgeCommands: CommandGroup = {
  name: 'knowledge',
  usage,
  run,
};
