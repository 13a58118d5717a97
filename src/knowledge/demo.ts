import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KnowledgeDeps } from './runtime.js';
import { createSource } from './sources.js';

/** The repository root (this file lives in src/knowledge/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Gives the demo project AnswerDesk's own documentation as knowledge: README.md and docs/*.md, one
 * Markdown source each, ingested in the background like any other source. Returns how many were
 * queued (0 when the files are not shipped, e.g. in a trimmed image).
 */
export async function addProjectDocs(deps: KnowledgeDeps, projectId: string, root = ROOT): Promise<number> {
  const files: string[] = [join(root, 'README.md')];
  try {
    const docs = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort();
    files.push(...docs.map((f) => join(root, 'docs', f)));
  } catch {
    // no docs folder
  }
  let queued = 0;
  for (const file of files) {
    let content: string;
    try {
      content = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    if (!content.trim()) continue;
    // Untitled: each document is titled by its first heading.
    await createSource(deps, projectId, { type: 'markdown', payload: content });
    queued++;
  }
  return queued;
}
