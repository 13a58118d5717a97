import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { ensureWidgetBuilt, WIDGET_BUNDLE } from '../../../widget/build.js';

export interface WidgetScript {
  body: Buffer;
  gzip: Buffer;
  /** Strong validator over the uncompressed bytes; the gzip variant gets its own suffix. */
  etag: string;
}

/**
 * The built widget bundle, read once and re-read only when the file changes (a rebuild while the
 * server runs is picked up on the next request). A missing bundle is built on demand, so the server
 * also works when started without `npm start`'s prestart step.
 */
export function widgetScriptSource(file = WIDGET_BUNDLE): () => Promise<WidgetScript> {
  let cached: { mtimeMs: number; size: number; script: WidgetScript } | null = null;
  let building: Promise<unknown> | null = null;
  return async () => {
    let info = await stat(file).catch(() => null);
    if (!info) {
      building ??= ensureWidgetBuilt(file).finally(() => (building = null));
      await building;
      info = await stat(file);
    }
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.script;
    const body = await readFile(file);
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 32);
    const script = { body, gzip: gzipSync(body, { level: 9 }), etag: `"${hash}"` };
    cached = { mtimeMs: info.mtimeMs, size: info.size, script };
    return script;
  };
}

/** Whether an If-None-Match header names this ETag (a list, weak forms and `*` included). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const c = candidate.trim().replace(/^W\//, '');
    return c === bare || c === bare.replace(/"$/, '-gzip"');
  });
}

/** Whether the client takes gzip (`Accept-Encoding: gzip`, not refused with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'gzip' && name !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}
