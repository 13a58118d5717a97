import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the app goes; the server serves it at /dashboard (src/api/dashboard). */
export const DASHBOARD_DIR = path.join(ROOT, 'dist', 'dashboard');
export const DASHBOARD_SRC = path.join(ROOT, 'dashboard');

/** Issue 12's budget for the first load (JS + CSS that index.html pulls in, gzipped): the build fails above it. */
export const MAX_FIRST_LOAD_GZIP_BYTES = 250 * 1024;

export class DashboardTooLargeError extends Error {}

export interface DashboardBuild {
  dir: string;
  /** The files index.html loads before the app can draw, with their gzipped sizes. */
  firstLoad: Array<{ file: string; gzipBytes: number }>;
  firstLoadGzipBytes: number;
}

/** The scripts, module preloads and stylesheets index.html names: what a first visit downloads before anything shows. */
export function firstLoadFiles(indexHtml: string): string[] {
  const found = new Set<string>();
  for (const match of indexHtml.matchAll(/<script\b[^>]*\bsrc="([^"]+)"[^>]*>/g)) found.add(match[1]);
  for (const match of indexHtml.matchAll(/<link\b[^>]*>/g)) {
    const tag = match[0];
    if (!/\brel="(modulepreload|stylesheet)"/.test(tag)) continue;
    const href = /\bhref="([^"]+)"/.exec(tag);
    if (href) found.add(href[1]);
  }
  return [...found];
}

/**
 * Builds dashboard/ with Vite into a scratch folder, checks the first-load budget, writes a gzip
 * copy of every text asset (served as is to browsers that take gzip), then swaps the folder into
 * place with two renames, so a running server never reads a half-written build.
 */
export async function buildDashboard(outDir = DASHBOARD_DIR, maxGzipBytes = MAX_FIRST_LOAD_GZIP_BYTES): Promise<DashboardBuild> {
  // Vite is loaded only when building: the server never needs it.
  const { build } = await import('vite');
  const scratch = `${outDir}.${process.pid}.${Date.now()}.tmp`;
  // React's production build (JSX runtime included), also when the caller runs with NODE_ENV=test
  // as vitest does: Vite and its React plugin both read NODE_ENV.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  await build({
    configFile: path.join(DASHBOARD_SRC, 'vite.config.ts'),
    root: DASHBOARD_SRC,
    logLevel: 'warn',
    mode: 'production',
    build: { outDir: scratch, emptyOutDir: true },
  }).finally(() => {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  });
  try {
    const index = await readFile(path.join(scratch, 'index.html'), 'utf8');
    const firstLoad = await Promise.all(
      firstLoadFiles(index).map(async (url) => {
        const file = path.join(scratch, url.replace(/^\/dashboard\//, ''));
        return { file: path.relative(scratch, file), gzipBytes: gzipSync(await readFile(file), { level: 9 }).length };
      }),
    );
    const total = firstLoad.reduce((sum, f) => sum + f.gzipBytes, 0);
    if (total > maxGzipBytes) {
      throw new DashboardTooLargeError(
        `the dashboard's first load is ${formatKb(total)} gzipped, above the ${formatKb(maxGzipBytes)} budget: ${firstLoad.map((f) => `${f.file} ${formatKb(f.gzipBytes)}`).join(', ')}`,
      );
    }
    await precompress(scratch);
    await mkdir(path.dirname(outDir), { recursive: true });
    const old = `${outDir}.${process.pid}.${Date.now()}.old`;
    if (existsSync(outDir)) await rename(outDir, old);
    await rename(scratch, outDir);
    await rm(old, { recursive: true, force: true });
    return { dir: outDir, firstLoad, firstLoadGzipBytes: total };
  } catch (err) {
    await rm(scratch, { recursive: true, force: true });
    throw err;
  }
}

async function precompress(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(js|css|html|svg|json|map)$/.test(entry.name)) continue;
    const file = path.join(entry.parentPath, entry.name);
    await writeFile(`${file}.gz`, gzipSync(await readFile(file), { level: 9 }));
  }
}

/** The newest modification time of the dashboard's sources (what a build depends on). */
export async function newestSourceMtime(dir = DASHBOARD_SRC): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || entry.name === 'build.ts') continue;
    newest = Math.max(newest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** Builds only when there is no build yet (what `npm start` needs); returns null when it was there. */
export async function ensureDashboardBuilt(outDir = DASHBOARD_DIR): Promise<DashboardBuild | null> {
  if (existsSync(path.join(outDir, 'index.html'))) return null;
  return buildDashboard(outDir);
}

export function formatKb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

async function main(): Promise<void> {
  const built = process.argv.includes('--if-missing') ? await ensureDashboardBuilt() : await buildDashboard();
  if (!built) {
    process.stdout.write(`dashboard: ${path.relative(ROOT, DASHBOARD_DIR)} exists, not rebuilt\n`);
    return;
  }
  process.stdout.write(
    `dashboard: ${path.relative(ROOT, built.dir)} first load ${formatKb(built.firstLoadGzipBytes)} gzipped (budget ${formatKb(MAX_FIRST_LOAD_GZIP_BYTES)})\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    process.stderr.write(`dashboard build failed: ${err.message}\n`);
    process.exit(1);
  });
}
