import { THEMATIC_BREAK, type Block, type ChunkDraft, type Page } from './types.js';

export interface ChunkOptions {
  /** Target size of a chunk's text, in characters (~4 characters per token). */
  maxChars: number;
  /** Characters of the previous chunk repeated at the start of the next one in the same section. */
  overlapChars: number;
  /** A table up to this many characters stays in one chunk even when it exceeds `maxChars`. */
  maxTableChars: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxChars: 1200, overlapChars: 200, maxTableChars: 2400 };

/** Splits text at sentence ends into pieces of at most `max` characters (a longer sentence is cut at words). */
function splitText(text: string, max: number): string[] {
  const sentences = text.match(/[^.!?\n]+(?:[.!?]+["')\]]*|\n+|$)\s*/g) ?? [text];
  const pieces: string[] = [];
  let current = '';
  const push = () => {
    if (current.trim()) pieces.push(current.trim());
    current = '';
  };
  for (const sentence of sentences) {
    if (current.length + sentence.length <= max) {
      current += sentence;
      continue;
    }
    push();
    if (sentence.length <= max) {
      current = sentence;
      continue;
    }
    for (const word of sentence.split(/(\s+)/)) {
      if (current.length + word.length > max) push();
      current += word;
    }
  }
  push();
  return pieces;
}

/** Splits an oversized list or table at line boundaries; a table repeats its header row in each piece. */
function splitLines(text: string, max: number, repeatHeader: boolean): string[] {
  const lines = text.split('\n');
  const header = repeatHeader ? lines.slice(0, 2).join('\n') : '';
  const body = repeatHeader ? lines.slice(2) : lines;
  const pieces: string[] = [];
  let current = header;
  for (const line of body) {
    if (current.length + line.length + 1 > max && current !== header) {
      pieces.push(current);
      current = header;
    }
    if (line.length > max) {
      pieces.push(...splitText(line, max));
      continue;
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current && current !== header) pieces.push(current);
  return pieces;
}

/** The block cut into pieces that each fit the budget (small tables are never cut). */
function pieces(block: Block, o: ChunkOptions): string[] {
  if (block.text.length <= o.maxChars) return [block.text];
  if (block.kind === 'table') return block.text.length <= o.maxTableChars ? [block.text] : splitLines(block.text, o.maxChars, true);
  // Pieces leave room for the overlap carried in from the previous chunk.
  const room = Math.max(100, o.maxChars - o.overlapChars);
  if (block.kind === 'list' || block.kind === 'code') return splitLines(block.text, room, false);
  return splitText(block.text, room);
}

/** The tail of a chunk to carry into the next one, starting at a word (or sentence) boundary. */
function overlapTail(text: string, chars: number): string {
  if (chars <= 0 || text.length <= chars) return chars <= 0 ? '' : text;
  const tail = text.slice(-chars);
  const sentence = tail.search(/[.!?]\s+\S/);
  if (sentence >= 0 && sentence < chars / 2) return tail.slice(sentence + 1).trim();
  const space = tail.indexOf(' ');
  return space >= 0 ? tail.slice(space + 1) : tail;
}

function withAnchor(url: string | null, anchor: string | undefined): string | null {
  if (!anchor) return url;
  if (!url) return `#${anchor}`;
  return `${url.split('#')[0]}#${anchor}`;
}

/**
 * Cuts a page into chunks along its structure: a heading always starts a new chunk, blocks of one
 * section are packed together up to the size budget, an oversized block is split at sentence or line
 * boundaries, and consecutive chunks of one section share `overlapChars` of text so that a sentence
 * cut at a boundary is still found whole. Each chunk keeps the page title, its heading path and the
 * URL (with the anchor of its nearest heading).
 */
export function chunkPage(page: Page, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): ChunkDraft[] {
  const chunks: ChunkDraft[] = [];
  const headings: Array<{ level: number; text: string; anchor?: string }> = [];
  let parts: string[] = [];
  let size = 0;
  let carried = false; // parts[0] is overlap from the previous chunk, not new content

  const headingPath = () => headings.map((h) => h.text);
  const anchor = () => [...headings].reverse().find((h) => h.anchor)?.anchor;
  const flush = (keepOverlap: boolean) => {
    const fresh = carried ? parts.length > 1 : parts.length > 0;
    if (fresh) {
      const text = parts.join('\n\n');
      chunks.push({ title: page.title, headingPath: headingPath(), url: withAnchor(page.url, anchor()), text });
      const tail = keepOverlap ? overlapTail(text, options.overlapChars) : '';
      parts = tail ? [tail] : [];
      size = tail.length;
      carried = tail.length > 0;
    } else if (!keepOverlap) {
      parts = [];
      size = 0;
      carried = false;
    }
  };

  let broken = false; // a thematic break came after the last piece
  for (const block of page.blocks) {
    if (block.kind === 'break') {
      broken = true;
      continue;
    }
    if (block.kind === 'heading') {
      broken = false;
      flush(false);
      while (headings.length > 0 && headings[headings.length - 1]!.level >= block.level) headings.pop();
      headings.push({ level: block.level, text: block.text, anchor: block.anchor });
      continue;
    }
    for (const piece of pieces(block, options)) {
      if (broken) {
        // The break stays in the chunk as a line a quote does not cross; a chunk never starts or ends
        // with one, and nothing is carried over it: no sentence is cut at a break.
        broken = false;
        const fresh = carried ? parts.length > 1 : parts.length > 0;
        if (fresh && size + THEMATIC_BREAK.length + 2 + piece.length + 2 <= options.maxChars) {
          parts.push(THEMATIC_BREAK);
          size += THEMATIC_BREAK.length + 2;
        } else flush(false);
      }
      if (size > 0 && size + piece.length + 2 > options.maxChars) flush(true);
      // Overlap never pushes a whole-kept piece (a table) past the budget twice over.
      if (carried && size + piece.length + 2 > options.maxChars) {
        parts = [];
        size = 0;
        carried = false;
      }
      parts.push(piece);
      size += piece.length + 2;
    }
  }
  flush(false);
  return chunks;
}
