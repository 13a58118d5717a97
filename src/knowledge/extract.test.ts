import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkPage } from './chunk.js';
import { faqToPage, htmlToPage, MAX_HTML_DEPTH, pageTitle } from './extract.js';

const page = (body: string) => htmlToPage(`<html><head><title>Manual</title></head><body>${body}</body></html>`, null);
const texts = (body: string) => page(body).blocks.filter((b) => b.kind !== 'heading').map((b) => b.text);

describe('htmlToPage', () => {
  it('refuses a page nested deeper than any real one, at once, and reads one as deep as allowed', () => {
    const nested = (depth: number) =>
      `<html><head><title>Deep</title></head><body><main>${'<div>'.repeat(depth)}<p>The bottom of the page.</p>${'</div>'.repeat(depth)}</main></body></html>`;
    // 2,000 levels took Readability over a minute, on the thread that reads the page.
    expect(() => htmlToPage(nested(2_000), null)).toThrow(`The page's HTML is nested more than ${MAX_HTML_DEPTH} elements deep`);
    expect(() => htmlToPage(`<span>${'<b>'.repeat(MAX_HTML_DEPTH + 1)}x</span>`, null)).toThrow(/nested more than/);
    // html, body, main, then the divs and the paragraph.
    const page = htmlToPage(nested(MAX_HTML_DEPTH - 4), null);
    expect(page.blocks.map((b) => b.text)).toContain('The bottom of the page.');
  });

  it('reads <br> as a line break, also inside inline elements, and block edges as spaces on one line', () => {
    expect(texts('<main><h1>Dump</h1><p><b>PRAGMA recursive_triggers;<br>PRAGMA recursive_triggers = </b><i>boolean</i>;</p></main>')).toEqual([
      'PRAGMA recursive_triggers;\nPRAGMA recursive_triggers = boolean;',
    ]);
    // A line break in the source is a space, as a browser shows it.
    expect(texts('<main><h1>Dump</h1><p>Dump only\n   tables.</p></main>')).toEqual(['Dump only tables.']);
    expect(texts('<main><h1>Dump</h1><ul><li><code>-t</code><br><code>--table</code></li><li><p>One.</p><p>Two.</p></li></ul></main>')).toEqual([
      '- -t --table\n- One. Two.',
    ]);
  });

  it('reads a superscript as a power, 2^31, and an ordinal, a mark or a footnote as written', () => {
    expect(texts('<main><h1>Limits</h1><p>A length of up to 2<sup>31</sup>-1 bytes, 2<sup>n-1</sup> pages; on the 1<sup>st</sup> day, Acme<sup>TM</sup> said so<sup><a href="#n1">[1]</a></sup>.</p></main>')).toEqual([
      'A length of up to 2^31-1 bytes, 2^(n-1) pages; on the 1st day, AcmeTM said so[1].',
    ]);
    expect(texts('<main><h1>Limits</h1><table><tr><th>Limit</th><th>Value</th></tr><tr><td>Rows</td><td>2<sup>64</sup></td></tr></table></main>')).toEqual([
      '| Limit | Value |\n| --- | --- |\n| Rows | 2^64 |',
    ]);
  });

  it('reads a definition list as entries: each term, then its description on a line that starts with ": "', () => {
    const more = 'It is read when the server starts and can be changed in the configuration file at any time.';
    const dl =
      `<main><h1>Options</h1><p>The following command-line options control the content and the format of the output. ${more}</p><dl class="variablelist">` +
      '<dt><span class="term"><code class="option">-t <em>pattern</em></code><br><code class="option">--table=<em>pattern</em></code></span></dt>' +
      `<dd><p>Dump only tables with names matching <em>pattern</em>.</p><pre>pg_dump -t mytab mydb</pre><p>Multiple tables can be selected. ${more}</p></dd>` +
      `<dt>default_toast_compression (<code>enum</code>)</dt><dt>toast_compression</dt><dd><p>Sets the default TOAST compression method. ${more}</p></dd>` +
      '</dl></main>';
    const { blocks } = page(dl);
    expect(blocks.slice(blocks.findIndex((b) => b.text.startsWith('-t')))).toEqual([
      { kind: 'text', text: '-t pattern --table=pattern' },
      { kind: 'text', text: ': Dump only tables with names matching pattern.' },
      { kind: 'code', text: 'pg_dump -t mytab mydb' },
      { kind: 'text', text: `Multiple tables can be selected. ${more}` },
      { kind: 'text', text: 'default_toast_compression (enum), toast_compression' },
      { kind: 'text', text: `: Sets the default TOAST compression method. ${more}` },
    ]);
    expect(chunkPage(page(dl))[0]!.text).toContain('default_toast_compression (enum), toast_compression\n\n: Sets the default TOAST compression method.');
  });

  it('drops the page’s footer, navigation and sidebars, as elements or ARIA landmarks, and small print', () => {
    const body =
      '<div role="navigation"><a href="/">Zephyrnav home</a></div>' +
      '<main><h1>Autoincrement</h1><p>Any attempt to use AUTOINCREMENT on a WITHOUT ROWID table results in an error. '.repeat(3) +
      '</p><div role="complementary">Zephyraside related pages</div>' +
      '<p align="center"><small><i>This page last modified on <a href="/finfo">2017-02-02 23:55:23</a> UTC </i></small></p>' +
      '<p>The limit is 2<sup><small>64</small></sup> rows.</p></main>' +
      '<div role="contentinfo">Zephyrfooter copyright</div><footer>Zephyrfooter links</footer>';
    const all = texts(body).join('\n');
    expect(all).toContain('results in an error.');
    // <small> inside a sentence is part of it; a paragraph that is all small print is not content.
    expect(all).toContain('The limit is 2^64 rows.');
    expect(all).not.toMatch(/last modified|Zephyr/);
  });
  it('reads a heading inside a box or a description, or a box’s title paragraph, as the box’s title, not as a section of the page', () => {
    const more = 'The option can be given more than once, and its pattern follows the rules of the shell.';
    const body =
      `<main><h1>pg_dump</h1><h2>Options</h2><p>The following command-line options control the output. ${more}</p>` +
      `<dl><dt>-e pattern</dt><dd><p>Dump only extensions matching pattern. ${more}</p>` +
      '<div class="note"><h3 class="title">Note</h3><p>When -e is specified, pg_dump dumps no other objects.</p></div>' +
      `<p>Any configuration relation is included. ${more}</p></dd><dt>-f file</dt><dd><p>Send output to the specified file. ${more}</p></dd></dl>` +
      '<div class="warning"><h3 class="title">Warning</h3><pre>pg_dump -f out.sql</pre><p>Check the file before restoring it.</p></div>' +
      '<div role="note"><h4>Read this first:</h4><p>Restores run as the owner.</p></div>' +
      '<div class="admonition seealso"><p class="admonition-title">See also</p><p>pg_restore, which reads what pg_dump writes.</p></div><p>The remaining options follow.</p><h2>Examples</h2><p>To dump a database called mydb into a SQL-script file, run the command below.</p></main>';
    const { blocks } = page(body);
    const titles = ['Note', 'Warning', 'Read this first:', 'See also'];
    expect(blocks.filter((b) => b.kind === 'heading' && titles.includes(b.text))).toEqual([]);
    expect(blocks.map((b) => b.text)).toEqual(
      expect.arrayContaining(['Note: When -e is specified, pg_dump dumps no other objects.', 'Warning', 'Read this first: Restores run as the owner.', 'See also: pg_restore, which reads what pg_dump writes.']),
    );
    // The content after a box stays in its section.
    const chunks = chunkPage(page(body));
    expect(chunks.find((c) => c.text.includes('Send output to the specified file.'))!.headingPath.at(-1)).toBe('Options');
    expect(chunks.find((c) => c.text.includes('The remaining options follow.'))!.headingPath.at(-1)).toBe('Options');
  });
  it('reads AsciiDoc’s note, a table of one row with the label in its first cell, as a box and its title', () => {
    const note =
      '<div class="admonitionblock"><table><tr><td class="icon"><div class="title">Note</div></td>' +
      '<td class="content">In addition, the date part is accepted in the following formats: YYYY.MM.DD, MM/DD/YYYY and DD.MM.YYYY.</td></tr></table></div>';
    const row = '<table><tr><td>ISO 8601</td><td>2005-04-07T22:13:13</td></tr></table>';
    const { blocks } = page(`<main><h1>git-commit</h1><h2>DATE FORMATS</h2><p>The GIT_AUTHOR_DATE environment variable supports these formats.</p>${note}${row}</main>`);
    expect(blocks.slice(3)).toEqual([
      { kind: 'text', text: 'Note: In addition, the date part is accepted in the following formats: YYYY.MM.DD, MM/DD/YYYY and DD.MM.YYYY.' },
      // A table of one row outside a box is a table.
      { kind: 'table', text: '| ISO 8601 | 2005-04-07T22:13:13 |\n| --- | --- |' },
    ]);
    // Nor in a box that says something beside it, nor in a description; and a description's first
    // line that reads like a label is no title.
    const beside = page(`<main><div class="warning">Do not change these values after the first start: ${row}</div><dl><dt>ports</dt><dd>${row}</dd><dt>level</dt><dd><p>Warning</p><p>Only problems are logged.</p></dd></dl></main>`);
    expect(beside.blocks.map((b) => b.text)).toEqual([
      'Do not change these values after the first start:',
      '| ISO 8601 | 2005-04-07T22:13:13 |\n| --- | --- |',
      'ports',
      '| ISO 8601 | 2005-04-07T22:13:13 |\n| --- | --- |',
      'level',
      ': Warning',
      'Only problems are logged.',
    ]);
  });

  it('reads <hr> as a thematic break between the blocks it separates', () => {
    const entry = (name: string) => `Query or change the ${name} setting of the database connection, which every statement then uses.`;
    const body =
      `<main><h1>PRAGMA Statements</h1><p>${entry('first')} ${entry('second')}</p><a name="pragma_analysis_limit"></a>` +
      `<h _id=pragma_analysis_limit style="display:none"> PRAGMA analysis_limit</h><hr><p><b>PRAGMA analysis_limit;</b></p><p>${entry('analysis limit')}</p>` +
      `<a name="pragma_application_id"></a><h _id=pragma_application_id style="display:none"> PRAGMA application_id</h><hr><p><b>PRAGMA application_id;</b></p><p>${entry('application id')}</p></main>`;
    expect(page(body).blocks.slice(-6)).toEqual([
      { kind: 'break', text: '---' },
      { kind: 'text', text: 'PRAGMA analysis_limit;' },
      { kind: 'text', text: entry('analysis limit') },
      { kind: 'break', text: '---' },
      { kind: 'text', text: 'PRAGMA application_id;' },
      { kind: 'text', text: entry('application id') },
    ]);
  });

  it('reads the whole page when Readability keeps only part of it, without the manual’s navigation bars', () => {
    // PostgreSQL's pg_dump page: no <main>, and Readability's article is the option list alone.
    const html = readFileSync(new URL('../../test/quality/postgres/docs/app-pgdump.html', import.meta.url), 'utf8');
    const chunks = chunkPage(htmlToPage(html, 'https://docs.example.com/app-pgdump.html'));
    const holding = (text: string) => chunks.find((c) => c.text.includes(text));
    expect(holding('[connection-option...] [option...] [dbname]')?.headingPath).toEqual(['Synopsis']);
    expect(holding('pg_dump does not block other users accessing the database')?.headingPath).toEqual(['Description']);
    expect(holding('Dump only tables with names matching')?.headingPath).toEqual(['Options']);
    // DocBook's Prev / Up / Home / Next bars above and below the page are no part of it.
    expect(chunks.map((c) => c.text).join('\n')).not.toMatch(/\bPrev\b|\bHome\b/);
  });

  it('keeps the lead Readability leaves out with the h1’s element: a manual page’s NAME line', () => {
    // AsciiDoc puts the h1 and the NAME line in <div id="header">, which Readability leaves out as a
    // site header; its pages are written with CR LF, which an HTML parser reads as LF.
    const git = chunkPage(htmlToPage(readFileSync(new URL('../../test/quality/git/docs/git-cherry-pick.html', import.meta.url), 'utf8'), null));
    const name = git.find((c) => c.text.includes('git-cherry-pick - Apply the changes introduced by some existing commits'));
    expect(name?.headingPath).toEqual(['git-cherry-pick(1) Manual Page', 'NAME']);
    expect(git.find((c) => c.headingPath.includes('SYNOPSIS'))?.text).toMatch(/^git cherry-pick \[--edit\][^\r]*\ngit cherry-pick \(--continue/);
    expect(git.map((c) => c.text).join('\n')).not.toContain('\r');
    // A page Readability keeps too little of is read whole, without AsciiDoc's <div id="footer">.
    const commit = chunkPage(htmlToPage(readFileSync(new URL('../../test/quality/git/docs/git-commit.html', import.meta.url), 'utf8'), null));
    expect(commit.find((c) => c.text.includes('git-commit - Record changes to the repository'))).toBeDefined();
    expect(commit.at(-1)?.text).toBe('Part of the git(1) suite');
  });

  it('takes a lead of a few lines of text from the h1’s own element only, and no other', () => {
    const para = (n: number) =>
      `<p>Paragraph ${n} of the returns policy: an item bought in the last thirty days can be sent back in its original packaging, and the refund reaches the card that paid for it within five working days of the parcel's arrival at our warehouse.</p>`;
    const content = `<div id="content">${[1, 2, 3, 4, 5, 6].map(para).join('')}</div>`;
    const sidebar = '<div id="sidebar"><p>Popular links</p><ul><li>Shipping rates</li><li>Gift cards</li><li>Track an order</li></ul></div>';
    const read = (body: string) => htmlToPage(`<html><head><title>Returns</title></head><body>${body}</body></html>`, null).blocks.map((b) => b.text);
    // A sidebar beside the header that holds the h1 stays out.
    const lead = read(`<div id="header"><h1>Returns</h1><p>Returns - sending an item back for a refund</p></div>${sidebar}${content}`);
    expect(lead.slice(0, 3)).toEqual(['Returns', 'Returns - sending an item back for a refund', expect.stringMatching(/^Paragraph 1 /)]);
    expect(lead.join('\n')).not.toMatch(/Popular links|Gift cards/);
    // No lead: an h1 in the body itself, a header with a table of contents (Asciidoctor's), a hidden
    // h1, a site's logo.
    const none = ['Returns', expect.stringMatching(/^Paragraph 1 /)];
    expect(read(`<h1>Returns</h1><div id="sidebar"><p>Popular links: shipping rates, gift cards</p></div>${content}`).slice(0, 2)).toEqual(none);
    const toc = '<div id="toc"><div id="toctitle">Contents</div><ul><li>Sending it back</li><li>Refunds</li></ul></div>';
    expect(read(`<div id="header"><h1>Returns</h1><div class="details">Jane Doe</div>${toc}</div>${content}`).slice(0, 2)).toEqual(none);
    expect(read(`<div style="display:none"><h1>Join our newsletter</h1><p>Ten percent off your first order.</p></div>${content}`).join('\n')).not.toMatch(/newsletter|Ten percent/);
    expect(read(`<div id="header"><h1><a href="/">Acme</a></h1><p>Just another shop</p></div>${content}`).join('\n')).not.toMatch(/Just another shop/);
  });

  it('drops the permalinks of headings and definitions, not a link to a place on the page that has words', () => {
    // Sphinx and MkDocs end each heading and signature with "¶"; Docusaurus with a zero-width space.
    const sphinx = page(
      '<main><h1>pathlib<a class="headerlink" href="#module-pathlib" title="Permalink to this heading">¶</a></h1>' +
        '<section><h2>Basic use<a class="headerlink" href="#basic-use">¶</a></h2><p>Importing the main class.</p>' +
        '<dl><dt id="pathlib.Path">class pathlib.Path(*pathsegments)<a class="headerlink" href="#pathlib.Path">¶</a></dt><dd><p>A concrete path.</p></dd></dl>' +
        '<h2>Methods<a class="hash-link" href="#methods">\u200b</a></h2><p>See <a href="#basic-use">Basic use</a>.</p></section></main>',
    );
    expect(sphinx.blocks.filter((b) => b.kind === 'heading').map((b) => b.text)).toEqual(['pathlib', 'Basic use', 'Methods']);
    expect(sphinx.blocks.filter((b) => b.kind !== 'heading').map((b) => b.text)).toEqual([
      'Importing the main class.',
      'class pathlib.Path(*pathsegments)',
      ': A concrete path.',
      'See Basic use.',
    ]);
  });

  it('titles a page by its h1 when its <title> is the h1 followed by the site’s name', () => {
    const sphinx = htmlToPage(
      '<html><head><title>json — JSON encoder and decoder &#8212; Python 3.11.2 documentation</title></head><body>' +
        '<div role="main"><h1>json — JSON encoder and decoder<a class="headerlink" href="#module-json">¶</a></h1><p>Encode and decode JSON.</p></div></body></html>',
      null,
    );
    expect(sphinx.title).toBe('json — JSON encoder and decoder');
    expect(pageTitle('Returns | Acme Help', 'Returns')).toBe('Returns');
    expect(pageTitle('Returns - Acme Help', 'Returns')).toBe('Returns');
    // A subtitle, a title that goes on without a separator, or one that is not the h1 stays whole.
    expect(pageTitle('Returns: sending items back', 'Returns')).toBe('Returns: sending items back');
    expect(pageTitle('Node.js v18 - Documentation', 'Node.js')).toBe('Node.js v18 - Documentation');
    expect(pageTitle('Write-Ahead Logging', '1. Overview')).toBe('Write-Ahead Logging');
  });

  it('reads the page’s <main> when it has one, skipping what is hidden', () => {
    const body =
      '<header><h1>Acme Help</h1></header><main><h1>Returns</h1><p>Return any item within 30 days.</p>' +
      '<p style="display: none">Zephyr hidden text.</p><p hidden>Zephyr hidden too.</p><svg><text>Zephyr diagram label</text></svg><p>Refunds take five days.</p></main>';
    expect(page(body).blocks).toEqual([
      { kind: 'heading', level: 1, text: 'Returns', anchor: 'returns' },
      { kind: 'text', text: 'Return any item within 30 days.' },
      { kind: 'text', text: 'Refunds take five days.' },
    ]);
  });

  it('keeps an h1 that Readability turned into an h2 once, not twice, in the heading path', () => {
    // SQLite's pages number their sections with h1; Readability keeps them as h2.
    const para = (what: string) => `<p>The ATTACH DATABASE statement ${what}, and the schema name that follows AS is how statements then refer to it, in every query.</p>`;
    const body = `<div><h1>1. Overview</h1>${para('adds a database file').repeat(2)}<h1>2. Details</h1>${para('names the file').repeat(2)}</div>`;
    const chunks = chunkPage(page(body));
    expect(chunks.map((c) => c.headingPath)).toEqual([['1. Overview'], ['2. Details']]);
  });

  it('numbers repeated headings as GitHub does, keeping a heading’s own id and never handing it out again', () => {
    const url = 'https://shop.example/help/returns';
    const section = (heading: string, what: string) => `${heading}<p>The ${what} section.</p>`;
    // The h1 in the header is put back first: it takes `returns`, the h2 that follows gets the suffix.
    const html =
      `<html><head><title>Returns</title></head><body><header><h1>Returns!</h1></header><main>${section('<h2>Returns</h2>', 'first')}` +
      `${section('<h3>Example</h3>', 'generated')}${section('<h3 id="example">Example</h3>', 'own id')}${section('<h3>Example</h3>', 'third')}` +
      `${section('<h3 id="faq">Example</h3>', 'other id')}</main></body></html>`;
    expect(chunkPage(htmlToPage(html, url)).map((c) => c.url!.split('#')[1])).toEqual([
      'returns-1',
      // The page's own `#example` belongs to the second Example wherever it stands: the first is numbered.
      'example-1',
      'example',
      'example-2',
      'faq',
    ]);
  });
});

describe('faqToPage', () => {
  it('links each question by its anchor, a repeated question numbered as GitHub numbers a heading', () => {
    const items = [
      { question: 'Do you ship abroad?', answer: 'Yes, to the EU.' },
      { question: 'Do you ship abroad?', answer: 'Also to Norway and Switzerland.' },
    ];
    expect(chunkPage(faqToPage(items, 'Shipping FAQ')).map((c) => c.url)).toEqual(['#do-you-ship-abroad', '#do-you-ship-abroad-1']);
  });
});
