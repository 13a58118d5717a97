import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build` (dashboard/build.ts) writes the app. */
export const DASHBOARD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/dashboard');

/** Content types of what a Vite build emits. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The app's policy: everything from this origin, nothing inline, no plugins, never framed. React
 * and uPlot set styles through the CSSOM, which `style-src 'self'` allows.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The widget preview page (framed by the Widget page only): the widget script falls back to a
 * <style> element in browsers without constructable style sheets, and a project's launcher icon may
 * be an image on its own site.
 */
export const PREVIEW_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');

export interface DashboardFile {
  body: Buffer;
  /** The precompressed copy the build wrote beside it, if any. */
  gzip: Buffer | null;
  type: string;
  /** Hashed build output under assets/: its name changes with its content. */
  immutable: boolean;
}

/**
 * The file a /dashboard path names inside the build, or null when there is none. Paths are
 * resolved inside the build folder and anything that would leave it (`..`, absolute paths, NUL)
 * names nothing.
 */
export async function dashboardFile(relative: string, dir = DASHBOARD_DIR): Promise<DashboardFile | null> {
  if (!relative || relative.includes('\0') || relative.endsWith('.gz')) return null;
  const file = path.resolve(dir, relative);
  if (!file.startsWith(dir + path.sep)) return null;
  const type = TYPES[path.extname(file).toLowerCase()];
  if (!type) return null;
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  const [body, gzip] = await Promise.all([readFile(file), readFile(`${file}.gz`).catch(() => null)]);
  return { body, gzip, type, immutable: path.relative(dir, file).startsWith(`assets${path.sep}`) };
}

/** index.html of the build (every client-side route answers with it), or null before the first build. */
export async function dashboardIndex(dir = DASHBOARD_DIR): Promise<DashboardFile | null> {
  return dashboardFile('index.html', dir);
}

export const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>AnswerDesk dashboard</title></head>
<body><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or start the server with <code>npm start</code>, which builds it when missing).</p></body></html>`;
