import type { Block, Page } from './types.js';

/** Plain text: blank lines separate paragraphs; runs of bullet or numbered lines are lists. */
export function textToPage(text: string, title: string, url: string | null = null): Page {
  const blocks: Block[] = [];
  for (const para of text.replace(/\r\n?/g, '\n').split(/\n\s*\n/)) {
    const trimmed = para.trim();
    if (!trimmed) continue;
    const lines = trimmed.split('\n');
    const isList = lines.every((l) => /^\s*([-*•]|\d+[.)])\s+/.test(l));
    blocks.push(isList ? { kind: 'list', text: lines.map((l) => l.trim()).join('\n') } : { kind: 'text', text: lines.join(' ').replace(/\s+/g, ' ') });
  }
  return { title: title || 'Untitled', url, blocks };
}
