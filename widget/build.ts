import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the bundle goes; the server serves it at GET /widget.js. */
export const WIDGET_BUNDLE = path.join(ROOT, 'dist', 'widget.js');

/** The size budget of issue "one script tag, a fast chat": the build fails above it. */
export const MAX_GZIP_BYTES = 35 * 1024;

export interface WidgetBuild {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export class WidgetTooLargeError extends Error {}

/**
 * Bundles widget/src into one minified IIFE (no module loader needed on the host page) and writes
 * it atomically (temp file + rename), so a server reading the file never sees half of it.
 */
export async function buildWidget(outFile = WIDGET_BUNDLE): Promise<WidgetBuild> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const result = await build({
    entryPoints: [path.join(ROOT, 'widget', 'src', 'index.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years: Shadow DOM, TextDecoderStream, color-mix() all need them anyway.
    target: ['es2020', 'chrome100', 'firefox100', 'safari16'],
    write: false,
    legalComments: 'none',
    define: { __WIDGET_VERSION__: JSON.stringify(pkg.version) },
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  const gzipBytes = gzipSync(code, { level: 9 }).length;
  if (gzipBytes > MAX_GZIP_BYTES) {
    throw new WidgetTooLargeError(`widget.js is ${formatKb(gzipBytes)} gzipped, above the ${formatKb(MAX_GZIP_BYTES)} budget`);
  }
  await mkdir(path.dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, code);
  await rename(tmp, outFile);
  return { file: outFile, bytes: code.length, gzipBytes };
}

/** Builds only when the bundle is missing (what `npm start` needs); returns null when it was there. */
export async function ensureWidgetBuilt(outFile = WIDGET_BUNDLE): Promise<WidgetBuild | null> {
  try {
    await stat(outFile);
    return null;
  } catch {
    return buildWidget(outFile);
  }
}

export function formatKb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

async function main(): Promise<void> {
  const ifMissing = process.argv.includes('--if-missing');
  const built = ifMissing ? await ensureWidgetBuilt() : await buildWidget();
  if (!built) {
    process.stdout.write(`widget: ${path.relative(ROOT, WIDGET_BUNDLE)} exists, not rebuilt\n`);
    return;
  }
  process.stdout.write(
    `widget: ${path.relative(ROOT, built.file)} ${formatKb(built.bytes)} minified, ${formatKb(built.gzipBytes)} gzipped (budget ${formatKb(MAX_GZIP_BYTES)})\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    process.stderr.write(`widget build failed: ${err.message}\n`);
    process.exit(1);
  });
}
