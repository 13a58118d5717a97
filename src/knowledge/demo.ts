import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KnowledgeDeps } from './runtime.js';
import { createSource } from './sources.js';

/** The demo shop's help center: the Markdown articles of the fictional shop Northwind Goods. */
export const DEMO_SHOP_ARTICLES = fileURLToPath(new URL('../../demo/shop/articles/', import.meta.url));

/**
 * Gives the demo project the sample shop's help center as knowledge: one Markdown source per
 * article, titled by its first heading, ingested in the background like any other source. Returns
 * how many were queued (0 when the articles are not shipped, e.g. in a trimmed image).
 */
export async function addDemoHelpCenter(deps: KnowledgeDeps, projectId: string, dir = DEMO_SHOP_ARTICLES): Promise<number> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.md')).sort();
  } catch {
    return 0;
  }
  let queued = 0;
  for (const file of files) {
    const content = await readFile(join(dir, file), 'utf8');
    if (!content.trim()) continue;
    await createSource(deps, projectId, { type: 'markdown', payload: content });
    queued++;
  }
  return queued;
}
