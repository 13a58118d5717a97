import type { Block } from './types.js';

/**
 * The anchor GitHub gives a heading (github-slugger's rule, which other Markdown renderers follow):
 * lower case, punctuation and symbols removed but `-` and `_` (connector punctuation) kept, as are
 * letters, combining marks and digits, then each space a `-`: `fs_readFile(path[, options])` →
 * `fs_readfilepath-options`.
 */
function slugify(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\s-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Gives the headings of one document their anchors, unique within it as GitHub makes them
 * (github-slugger's `BananaSlug`): a heading without an anchor of its own gets its slug, and a slug
 * already used gets `-1`, `-2`, … until the result is unused, so "Example", "Example", "Example 1"
 * link `#example`, `#example-1`, `#example-1-1`. A heading's own anchor (an HTML `id`, a PDF page)
 * is kept as it is and is never handed out again, wherever it stands: the browser finds that id
 * whatever comes before it. Each extractor calls it once its page's blocks are complete, so the
 * numbering is the document's own.
 */
export function anchorHeadings(blocks: Block[]): Block[] {
  // How many times each slug has been asked for, as github-slugger counts: the next suffix to try.
  const occurrences = new Map<string, number>();
  for (const block of blocks) if (block.kind === 'heading' && block.anchor !== undefined) occurrences.set(block.anchor, 0);
  return blocks.map((block) => {
    if (block.kind !== 'heading' || block.anchor !== undefined) return block;
    const slug = slugify(block.text);
    let anchor = slug;
    while (occurrences.has(anchor)) {
      const n = occurrences.get(slug)! + 1;
      occurrences.set(slug, n);
      anchor = `${slug}-${n}`;
    }
    occurrences.set(anchor, 0);
    return { ...block, anchor };
  });
}
