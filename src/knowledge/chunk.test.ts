import { describe, expect, it } from 'vitest';
import { chunkPage } from './chunk.js';
import { markdownToPage } from './markdown.js';
import { definitionTerms } from './types.js';

const sentence = (i: number) => `Sentence number ${i} explains one more detail of the warranty terms.`;

describe('chunkPage', () => {
  it('packs a long section within the budget, with overlap between consecutive chunks', () => {
    const body = Array.from({ length: 60 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkPage(markdownToPage(`# Guide\n\n## Warranty\n\n${body}`, ''), { maxChars: 500, overlapChars: 120, maxTableChars: 1000 });
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(500 + 120 + 2);
      expect(c.headingPath).toEqual(['Guide', 'Warranty']);
      expect(c.url).toBe('#warranty');
    }
    // The start of each chunk repeats the end of the previous one.
    for (let i = 1; i < chunks.length; i++) {
      const head = chunks[i]!.text.slice(0, 40);
      expect(chunks[i - 1]!.text).toContain(head);
    }
    // Every sentence is somewhere, whole.
    const all = chunks.map((c) => c.text).join(' ');
    for (let i = 0; i < 60; i++) expect(all).toContain(sentence(i));
  });

  it('links each chunk to its heading by the anchor GitHub gives it: `_` and accents kept, other punctuation gone', () => {
    const markdown = [
      '# File system',
      '',
      '## `fs_readFile(path[, options])`',
      '',
      'Reads the entire contents of a file.',
      '',
      '## The `__dirname` variable',
      '',
      'The directory name of the current module.',
      '',
      '## Cafe\u0301 — crème brûlée',
      '',
      'A heading with a combining accent and a dash that is not `-`.',
    ].join('\n');
    const chunks = chunkPage(markdownToPage(markdown, '', 'https://docs.example/api/fs.md'));
    expect(chunks.map((c) => c.url)).toEqual([
      'https://docs.example/api/fs.md#fs_readfilepath-options',
      'https://docs.example/api/fs.md#the-__dirname-variable',
      'https://docs.example/api/fs.md#cafe\u0301--crème-brûlée',
    ]);
  });

  it('numbers a repeated heading as GitHub does, `-1`, `-2`, never taking an anchor that is already used', () => {
    const section = (heading: string, what: string) => `## ${heading}\n\nThe ${what} example.`;
    const markdown = ['# Guide', section('Example', 'first'), section('Example', 'second'), section('Example 1', 'numbered'), section('Example', 'third')].join('\n\n');
    const url = 'https://docs.example/guide.md';
    expect(chunkPage(markdownToPage(markdown, '', url)).map((c) => c.url)).toEqual([
      `${url}#example`,
      `${url}#example-1`,
      // "Example 1" is slugged example-1, taken by the second "Example": github-slugger numbers it in turn.
      `${url}#example-1-1`,
      `${url}#example-2`,
    ]);
    // Each document starts afresh: the numbering is per document.
    expect(chunkPage(markdownToPage(section('Example', 'only'), '', url)).map((c) => c.url)).toEqual([`${url}#example`]);
  });

  it("reads a paragraph's line breaks as Markdown renders them, a long run of blanks included", () => {
    // No line break ends this run: a pattern that starts with a run of blanks is tried from each of
    // them, which took half a minute for this paragraph before the line breaks were read in one pass.
    const blanks = ' '.repeat(200_000);
    const page = markdownToPage(`# Notes\n\nWrapped over\n  two lines, then${blanks}a gap \t\nhere.  \nA hard break\\\nand another.`, '');
    expect(page.blocks[1]).toEqual({ kind: 'text', text: `Wrapped over two lines, then${blanks}a gap here.\nA hard break\nand another.` });
  });

  it('starts a chunk at every heading, with no overlap across sections', () => {
    const chunks = chunkPage(markdownToPage('# A\n\nAlpha text.\n\n## B\n\nBeta text.\n\n### C\n\nGamma text.\n\n## D\n\nDelta text.', ''));
    expect(chunks.map((c) => [c.headingPath, c.text])).toEqual([
      [['A'], 'Alpha text.'],
      [['A', 'B'], 'Beta text.'],
      [['A', 'B', 'C'], 'Gamma text.'],
      [['A', 'D'], 'Delta text.'],
    ]);
  });

  it('keeps a small table whole even past the budget, and splits a large one by rows with its header', () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => `| plan ${i} | ${i * 10} euros per month |`).join('\n');
    const small = chunkPage(markdownToPage(`## Prices\n\n| Plan | Price |\n| --- | --- |\n${rows(12)}`, ''), { maxChars: 200, overlapChars: 50, maxTableChars: 800 });
    expect(small).toHaveLength(1);
    expect(small[0]!.text).toContain('| plan 11 |');
    const large = chunkPage(markdownToPage(`## Prices\n\n| Plan | Price |\n| --- | --- |\n${rows(80)}`, ''), { maxChars: 300, overlapChars: 0, maxTableChars: 800 });
    expect(large.length).toBeGreaterThan(3);
    for (const c of large) expect(c.text.startsWith('| Plan | Price |')).toBe(true);
  });
  it('keeps a thematic break as a line between the entries it separates, never at a chunk’s edge or overlapped', () => {
    const entry = (name: string) => `PRAGMA ${name} sets how the library handles ${name} for every database connection that is open.`;
    const markdown = `## Pragmas\n\n---\n\n${entry('alpha')}\n\n---\n\n${entry('beta')}\n\n***\n\n${entry('gamma')}\n\n---\n\n## Next\n\nMore text.`;
    expect(chunkPage(markdownToPage(markdown, '')).map((c) => c.text)).toEqual([
      `${entry('alpha')}\n\n---\n\n${entry('beta')}\n\n---\n\n${entry('gamma')}`,
      'More text.',
    ]);
    // A chunk that fills up at a break ends there: the next starts at the entry, with no overlap.
    const small = chunkPage(markdownToPage(markdown, ''), { maxChars: 150, overlapChars: 60, maxTableChars: 400 });
    expect(small.map((c) => c.text)).toEqual([entry('alpha'), entry('beta'), entry('gamma'), 'More text.']);
  });
});

describe('definition-list entries in a chunk', () => {
  it('finds each term above its description, with or without a blank line between', () => {
    const html = 'shared_buffers (integer)\n\n: Sets the amount of memory.\n\nwork_mem (integer)\n\n: Sets the base maximum.\n\nA paragraph after the list.';
    expect(definitionTerms(html)).toEqual(['shared_buffers (integer)', 'work_mem (integer)']);
    // Markdown's own form: the term's line right above its description.
    expect(definitionTerms('Apple\n: A fruit.\n  : A company.\nNo term here.')).toEqual(['Apple']);
  });
});
