import { describe, expect, it } from 'vitest';
import { chunkPage } from './chunk.js';
import { boundNesting, MAX_INDENT_COLUMNS, MAX_QUOTE_DEPTH, markdownToPage } from './markdown.js';

const texts = (markdown: string) =>
  markdownToPage(markdown, 'Doc')
    .blocks.filter((b) => b.kind !== 'heading')
    .map((b) => b.text);

describe('markdownToPage', () => {
  it('reads every form of link as its text, and a link definition as no content', () => {
    const markdown = [
      '# DNS',
      '',
      '[`dns.lookup()`][] uses the operating system facilities; see [port.postMessage()][] for more,',
      'the [resolver class][Resolver], the [`Resolver`] itself, an [inline link](https://example.com/dns) and ![a diagram](dns.png).',
      '',
      '* Uses [`dns.lookup()`][] as [the default][Resolver].',
      '',
      '| Method | See |',
      '| --- | --- |',
      '| lookup | [`dns.lookup()`][] |',
      '',
      '[`dns.lookup()`]: #dnslookuphostname-options-callback',
      '[port.postMessage()]: worker_threads.md#portpostmessagevalue-transferlist',
      '[Resolver]: #class-dnsresolver',
      '[`Resolver`]: #class-dnsresolver',
    ].join('\n');
    expect(texts(markdown)).toEqual([
      'dns.lookup() uses the operating system facilities; see port.postMessage() for more, the resolver class, the Resolver itself, an inline link and a diagram.',
      '- Uses dns.lookup() as the default.',
      '| Method | See |\n| --- | --- |\n| lookup | dns.lookup() |',
    ]);
    // Brackets with no definition are no link (CommonMark), such as an optional argument.
    expect(texts('Call `fs.open()` as fs.open(path[, flags]) or see [nothing].')).toEqual(['Call fs.open() as fs.open(path[, flags]) or see [nothing].']);
  });

  it('keeps code spans as written and reads no emphasis inside a word', () => {
    const markdown = [
      '# Globals',
      '',
      'The `__filename` and `__dirname` variables, `Object.prototype.__proto__` and `**kwargs` are as written;',
      'so are snake_case_names and max__depth, while **bold**, __strong__, *em*, _em_ and ~~gone~~ lose their marks.',
      '',
      '## The `__dirname` variable',
    ].join('\n');
    const page = markdownToPage(markdown, '');
    expect(texts(markdown)).toEqual([
      'The __filename and __dirname variables, Object.prototype.__proto__ and **kwargs are as written; so are snake_case_names and max__depth, while bold, strong, em, em and gone lose their marks.',
    ]);
    expect(page.blocks.at(-1)).toMatchObject({ kind: 'heading', level: 2, text: 'The __dirname variable' });
  });

  it('reads <sup> in Markdown, inline or in a block of raw HTML, as a power: 2^31', () => {
    expect(texts('# Buffer\n\nThe size is at most 2<sup>31</sup> - 1 (or 2<sup>n - 1</sup>) on the 2<sup>nd</sup> try.')).toEqual([
      'The size is at most 2^31 - 1 (or 2^(n - 1)) on the 2nd try.',
    ]);
    expect(texts('# Buffer\n\n<p>\n  Up to 2<sup>53</sup> bytes.\n</p>')).toEqual(['Up to 2^53 bytes.']);
  });

  it('reads a raw HTML table as the HTML extractor does: rows under their header row, quoted whole in a chunk', () => {
    // The form of the Node.js docs' constants (os.md, fs.md, readline.md).
    const markdown = [
      '## Signal constants',
      '',
      'The following signal constants are exported by `os.constants.signals`.',
      '',
      '<table>',
      '  <tr>',
      '    <th>Constant</th>',
      '    <th>Description</th>',
      '  </tr>',
      '  <tr>',
      '    <td><code>SIGHUP</code></td>',
      '    <td>Sent to indicate when a controlling terminal is closed or a parent',
      '    process exits.</td>',
      '  </tr>',
      '  <tr>',
      '    <td><code>SIGINT</code></td>',
      '    <td>Sent when a user wishes to interrupt a process',
      '    (<kbd>Ctrl</kbd>+<kbd>C</kbd>).</td>',
      '  </tr>',
      '</table>',
      '',
      '<!-- A table in a comment is no content: <table><tr><td>gone</td></tr></table> -->',
      '',
      'Signals not listed here are platform-specific.',
    ].join('\n');
    const table = [
      '| Constant | Description |',
      '| --- | --- |',
      '| SIGHUP | Sent to indicate when a controlling terminal is closed or a parent process exits. |',
      '| SIGINT | Sent when a user wishes to interrupt a process (Ctrl+C). |',
    ].join('\n');
    const page = markdownToPage(markdown, 'os');
    expect(page.blocks).toEqual([
      { kind: 'heading', level: 2, text: 'Signal constants', anchor: 'signal-constants' },
      { kind: 'text', text: 'The following signal constants are exported by os.constants.signals.' },
      { kind: 'table', text: table },
      { kind: 'text', text: 'Signals not listed here are platform-specific.' },
    ]);
    expect(chunkPage(page).map((c) => c.text)).toEqual([
      `The following signal constants are exported by os.constants.signals.\n\n${table}\n\nSignals not listed here are platform-specific.`,
    ]);
  });

  it('reads an HTML comment as no content up to its `-->`, whatever tags it holds', () => {
    const markdown = [
      '## `buffer.length`',
      '',
      '<!-- YAML',
      'added: v0.1.90',
      'changes:',
      '  - version: v18.0.0',
      '    pr-url: https://github.com/nodejs/node/pull/1',
      '    description: The limit is now 2<sup>31</sup> - 1 bytes.',
      '-->',
      '',
      'The number of bytes in `buf`.<!-- inline note with <b>a tag</b> --> On 64-bit it is 2<sup>32</sup>.',
    ].join('\n');
    expect(texts(markdown)).toEqual(['The number of bytes in buf. On 64-bit it is 2^32.']);
  });

  it('reads each list item, nested ones too, as its own line, without the source’s marks', () => {
    const markdown = [
      '## `fsPromises.watch(filename[, options])`',
      '',
      '* `filename` {string|Buffer|URL}',
      '* Returns: {AsyncIterator} of objects with the properties:',
      '  * `eventType` {string} The type of',
      '    change',
      '  * `filename` {string|Buffer|null} The name of the file changed.',
      '    1. first step',
      '    2. second step',
      '* `options` {Object}',
      '',
      '  A loose item with a second paragraph.',
      '',
      '  ```js',
      "  watch('a');",
      '  ```',
    ].join('\n');
    expect(texts(markdown)).toEqual([
      [
        '- filename {string|Buffer|URL}',
        '- Returns: {AsyncIterator} of objects with the properties:',
        '  - eventType {string} The type of change',
        '  - filename {string|Buffer|null} The name of the file changed.',
        '    1. first step',
        '    2. second step',
        '- options {Object} A loose item with a second paragraph.',
        "  watch('a');",
      ].join('\n'),
    ]);
  });

  it('leaves real nesting as written and cuts a page nested hundreds deep to a bounded depth, its words kept', () => {
    const real = ['> quoted', '> > a reply in it', '', '- a', '  - b', '    - c', '', '\t\tcode in a tab-indented block', ''].join('\n');
    expect(boundNesting(real)).toBe(real);
    // 800 levels of list: marked costs about the cube of the depth (8.6 s for this one before).
    const list = Array.from({ length: 800 }, (_, i) => `${'  '.repeat(i)}- item ${i}`).join('\n');
    const items = texts(list).join('\n').split('\n');
    expect(items).toHaveLength(800);
    expect(items.at(-1)!.trim()).toBe('- item 799');
    expect(Math.max(...items.map((line) => line.length - line.trimStart().length))).toBeLessThanOrEqual(MAX_INDENT_COLUMNS);
    // Thousands of `>` overflowed marked's stack: the document failed to ingest.
    expect(texts(`${'> '.repeat(5_000)}Deep words.`)).toEqual(['Deep words.']);
    expect(boundNesting('> '.repeat(40) + 'x')).toBe('> '.repeat(MAX_QUOTE_DEPTH) + 'x');
    expect(boundNesting('\t'.repeat(40) + 'x')).toBe('\t'.repeat(MAX_INDENT_COLUMNS / 4) + 'x');
  });

  it('keeps a document marked cannot read as its paragraphs of plain text', () => {
    // Emphasis nested thousands deep overflows marked's stack.
    const markdown = `# Deep\n\n${'*'.repeat(5_000)}inner words${'*'.repeat(5_000)}\n\nA second paragraph.`;
    const page = markdownToPage(markdown, 'Deep doc');
    expect(page.title).toBe('Deep doc');
    expect(page.blocks.map((b) => b.text)).toEqual(['# Deep', `${'*'.repeat(5_000)}inner words${'*'.repeat(5_000)}`, 'A second paragraph.']);
  });

  it('reads long runs of blanks and of `<` in a heading, a list item, a table cell and raw HTML in one pass', () => {
    // No line break or `>` ends these runs: a pattern tried from each of their characters, scanning
    // to the run's end every time, took minutes for this page.
    const blanks = ' '.repeat(200_000);
    const opens = '<'.repeat(200_000);
    const markdown = [
      `# Heading${blanks}end`,
      '',
      `- wrapped${blanks}item`,
      '  over two lines',
      '',
      `| cell${blanks}end | b |`,
      '| --- | --- |',
      '| c | d |',
      '',
      '<div>',
      `Raw words ${opens}`,
      '',
    ].join('\n');
    const page = markdownToPage(markdown, '');
    expect(page.blocks.map((b) => [b.kind, b.text])).toEqual([
      ['heading', `Heading${blanks}end`],
      ['list', `- wrapped${blanks}item over two lines`],
      ['table', `| cell${blanks}end | b |\n| --- | --- |\n| c | d |`],
      ['text', `Raw words ${opens}`],
    ]);
  });

  it('keeps a stability note: whether an API is stable is something a reader asks', () => {
    const markdown = '# Worker threads\n\n> Stability: 2 - Stable\n\nThe `node:worker_threads` module enables the use of threads.';
    expect(chunkPage(markdownToPage(markdown, ''))[0]!.text).toBe('Stability: 2 - Stable\n\nThe node:worker_threads module enables the use of threads.');
  });
});
