import { createRequire } from 'node:module';
import { THEMATIC_BREAK, type Block } from './types.js';

/*
 * Reading HTML elements as blocks: what an HTML page's main content (src/knowledge/extract.ts) and
 * raw HTML in Markdown (src/knowledge/markdown.ts) have in common.
 */

const require = createRequire(import.meta.url);
let linkedom: typeof import('linkedom') | undefined;

/**
 * linkedom's parseHTML, with linkedom loaded on first use. Loading it is about half of the parser
 * worker's start, and a worker that reads only Markdown without raw HTML tables never needs it.
 * Required (its CommonJS build) rather than imported: the Markdown reader meets a raw table midway
 * through a synchronous walk, and a require loads in about a third of the time of an import run
 * through the TypeScript loader (docs/knowledge.md, Ingestion).
 */
export function parseHTML(html: string): ReturnType<(typeof import('linkedom'))['parseHTML']> {
  linkedom ??= require('linkedom') as typeof import('linkedom');
  return linkedom.parseHTML(html);
}

export const normalize = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();

/** Elements that hold no words of the page; an SVG's text is the labels of a picture, not sentences. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'nav', 'footer', 'aside', 'form', 'button', 'svg']);
/** ARIA landmarks that are a page's boilerplate, the role equivalents of nav, footer and aside. */
const BOILERPLATE_ROLES = new Set(['navigation', 'contentinfo', 'complementary', 'search']);
const INLINE = new Set(['a', 'span', 'strong', 'em', 'b', 'i', 'code', 'small', 'sup', 'sub', 'abbr', 'mark', 'time', 'br', 'kbd', 'var', 'samp', 'q', 'cite', 'u', 's', 'dfn', 'font']);
/** Class names of the navigation bars DocBook's HTML output puts above and below each page (Prev, Up, Home, Next). */
const BOILERPLATE_CLASSES = new Set(['navheader', 'navfooter']);
/** Ids of a page's footer written as a `<div>`, as AsciiDoc writes it ("Last updated 2024-05-31 00:35:55 UTC"). */
const BOILERPLATE_IDS = new Set(['footer']);
/** The boilerplate above as one selector, for removing it from a whole document. */
export const BOILERPLATE_SELECTOR = [
  'nav',
  'footer',
  'aside',
  ...[...BOILERPLATE_ROLES].map((role) => `[role="${role}"]`),
  ...[...BOILERPLATE_CLASSES].map((name) => `.${name}`),
  ...[...BOILERPLATE_IDS].map((id) => `#${id}`),
].join(', ');

/**
 * Class names of a box set off from the text around it: an admonition (DocBook's note, tip, warning,
 * caution and important; Sphinx's and MkDocs' `admonition`), a callout, a sidebar, GitHub's
 * `markdown-alert`. A heading inside one is the box's title, not a heading of the page.
 */
const LABELS = ['note', 'tip', 'hint', 'warning', 'caution', 'important', 'danger', 'attention'];
const BOX_CLASS = new RegExp(`^(${LABELS.join('|')}|admonition|admonitionblock|callout|sidebar)$|^(admonition|callout|markdown-alert)-`);

/** A box's label written as its first line of text rather than as a heading ("Note" in its own cell). */
const BOX_LABEL = new RegExp(`^(${LABELS.join('|')}|see also)$`, 'i');

/** An element's class names, as written. */
const classesOf = (el: Element) => (el.getAttribute('class') ?? '').split(/\s+/);

/**
 * Whether an element's headings are its own title rather than the page's sections: a box (by class or
 * ARIA role note), a definition's description or a list item or a table cell reached as a block.
 */
function boxed(el: Element): boolean {
  const tag = el.tagName.toLowerCase();
  return tag === 'dd' || tag === 'li' || tag === 'td' || tag === 'th' || setOff(el);
}

/** Whether an element is a box set off from the text around it, by its class or ARIA role note. */
function setOff(el: Element): boolean {
  if ((el.getAttribute('role') ?? '').toLowerCase() === 'note') return true;
  return classesOf(el).some((c) => BOX_CLASS.test(c.toLowerCase()));
}

/**
 * The blocks of a box with its headings read as titles: a heading followed by text becomes the start
 * of that text ("Note: …"), any other heading a line of text. A box's heading is not a section of the
 * page, so the content after the box stays under the section the box is in.
 */
function titled(blocks: Block[], labelled: boolean): Block[] {
  const out: Block[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (block.kind !== 'heading' && !(labelled && i === 0 && block.kind === 'text' && BOX_LABEL.test(block.text))) {
      out.push(block);
      continue;
    }
    const next = blocks[i + 1];
    if (next?.kind === 'text') {
      out.push({ kind: 'text', text: `${/[:.!?]$/.test(block.text) ? block.text : `${block.text}:`} ${next.text}` });
      i++;
    } else out.push({ kind: 'text', text: block.text });
  }
  return out;
}

/** Whether an element is not shown, as Readability judges it: `hidden`, `display: none`, `aria-hidden`. */
const hidden = (el: Element) =>
  el.hasAttribute('hidden') || /display\s*:\s*none/i.test(el.getAttribute('style') ?? '') || el.getAttribute('aria-hidden') === 'true';

/**
 * A heading's or a definition's permalink: a link to a place on the same page whose text is no word,
 * only a mark or nothing (Sphinx's and MkDocs' "¶", Docusaurus' "#" or a zero-width space, an icon).
 * Read as text it would end every heading ("Basic use¶") and every signature of a reference page.
 */
const PERMALINK_TEXT = /^[\s\u200b\u2060¶§#🔗⚓]*$/u;
const permalink = (el: Element) =>
  el.tagName.toLowerCase() === 'a' && (el.getAttribute('href') ?? '').startsWith('#') && PERMALINK_TEXT.test(el.textContent ?? '');

/** Whether an element holds none of the page's words: boilerplate, hidden, a permalink, or an element of no text. */
export const skipped = (el: Element) =>
  SKIPPED.has(el.tagName.toLowerCase()) ||
  hidden(el) ||
  permalink(el) ||
  BOILERPLATE_ROLES.has((el.getAttribute('role') ?? '').toLowerCase()) ||
  classesOf(el).some((c) => BOILERPLATE_CLASSES.has(c)) ||
  BOILERPLATE_IDS.has(el.getAttribute('id') ?? '');

/**
 * A superscript as plain text reads it: `2<sup>31</sup>` is `2^31`, not "231", and a longer exponent
 * is bracketed (`2^(n-1)`). What is raised only by typography stays as written: an ordinal's ending
 * (`1<sup>st</sup>`), a mark (`<sup>TM</sup>`, `®`, `*`, `†`) and a footnote's `[1]`.
 */
export function superscript(inner: string): string {
  const text = inner.trim();
  if (!text || /^(st|nd|rd|th|tm|sm|[®©*†‡])$/i.test(text) || text.startsWith('[')) return inner;
  return /^[-+−]?[\p{L}\p{N}.]+$/u.test(text) ? `^${text}` : `^(${text})`;
}

/**
 * A node's text with its line breaks: `<br>` and the edges of block elements are line breaks, which
 * `textContent` drops, so "-t pattern<br>--table=pattern" would read "-t pattern--table=pattern".
 */
function textOf(node: Node): string {
  // A line break in the source is a space: only <br> and block edges break a line.
  if (node.nodeType === 3) return (node.textContent ?? '').replace(/\s+/g, ' ');
  if (node.nodeType !== 1) return '';
  const el = node as Element;
  const tag = el.tagName.toLowerCase();
  if (tag === 'br') return '\n';
  if (skipped(el)) return '';
  const inner = Array.from(el.childNodes).map(textOf).join('');
  if (tag === 'sup') return superscript(inner);
  return INLINE.has(tag) ? inner : `\n${inner}\n`;
}

/** Text on one line (a heading, a list item, a table cell, a term): line breaks become spaces. */
export const oneLine = (node: Node) => normalize(textOf(node));

/** Text of a paragraph: spaces collapsed within lines, `<br>` kept as a line break. */
function paragraph(text: string): string {
  return text
    .split('\n')
    .map((line) => normalize(line))
    .filter(Boolean)
    .join('\n');
}

/**
 * Small print: an element whose words are all inside `<small>`, HTML's element for side comments
 * such as legal text and a page's "last modified" stamp (SQLite's pages end with one in a plain
 * paragraph), not what the page says.
 */
function smallPrint(nodes: Node[]): boolean {
  let inside = false;
  let outside = false;
  const visit = (node: Node, small: boolean) => {
    if (node.nodeType === 3) {
      if ((node.textContent ?? '').trim()) {
        if (small) inside = true;
        else outside = true;
      }
    } else if (node.nodeType === 1) {
      const inSmall = small || (node as Element).tagName.toLowerCase() === 'small';
      for (const child of Array.from(node.childNodes)) visit(child, inSmall);
    }
  };
  for (const node of nodes) visit(node, false);
  return inside && !outside;
}

/**
 * A definition list's entries: the term as a block, then its description, whose first paragraph
 * starts with ": " (the definition-list form of PHP Markdown Extra and Pandoc), so a reader of the
 * passage can tell where an entry starts: the line above a ": " line is a term. Further blocks of a
 * description follow as they are. Several terms of one description are one line, comma-separated.
 */
function definitionBlocks(dl: Element, out: Block[]): void {
  let terms: string[] = [];
  const flushTerms = () => {
    if (terms.length) out.push({ kind: 'text', text: terms.join(', ') });
    terms = [];
  };
  for (const child of Array.from(dl.children)) {
    const tag = child.tagName.toLowerCase();
    if (tag === 'div') {
      // HTML allows an entry to be wrapped in a div.
      flushTerms();
      definitionBlocks(child, out);
    } else if (tag === 'dt') {
      const term = oneLine(child);
      if (term) terms.push(term);
    } else if (tag === 'dd') {
      const described = boxBlocks(child);
      const first = described[0];
      if (terms.length && first?.kind === 'text') {
        // Term and description stay separate blocks: one block per entry moved chunk boundaries and
        // measured worse (docs/knowledge.md, Answer quality).
        out.push({ kind: 'text', text: terms.join(', ') }, { kind: 'text', text: `: ${first.text.replace(/\n/g, ' ')}` });
        described.shift();
        terms = [];
      } else flushTerms();
      out.push(...described);
    }
  }
  flushTerms();
}

/**
 * The blocks of a box (see `boxed`), its headings read as its titles. A box set off by its class or
 * role that is laid out as a table of one row, and holds nothing beside it, is read cell by cell,
 * and a first line that is only a box's label titles it: AsciiDoc writes a note as
 * `<table><tr><td class="icon">Note</td><td class="content">…</td></tr></table>`, which read as a
 * table had "Note" for its column's name.
 */
function boxBlocks(el: Element): Block[] {
  const inner: Block[] = [];
  const labelled = setOff(el);
  const row = labelled ? layoutRow(el) : null;
  if (row) for (const cell of Array.from(row.children)) domBlocks(cell, inner);
  else domBlocks(el, inner);
  return titled(inner, labelled);
}

/** The one row of a table that is all an element holds, when the table has no header cell. */
function layoutRow(el: Element): Element | null {
  const table = el.children.length === 1 && el.children[0]!.tagName.toLowerCase() === 'table' ? el.children[0]! : null;
  if (!table || normalize(el.textContent) !== normalize(table.textContent)) return null;
  const rows = Array.from(table.querySelectorAll('tr')).filter((tr) => tr.closest('table') === table);
  return rows.length === 1 && !rows[0]!.querySelector('th') ? rows[0]! : null;
}

/** Walks the main-content DOM in reading order, turning elements into blocks. */
export function domBlocks(node: Element, out: Block[]): void {
  let loose: Node[] = [];
  const flushLoose = () => {
    const text = paragraph(loose.map(textOf).join(''));
    if (text && !smallPrint(loose)) out.push({ kind: 'text', text });
    loose = [];
  };
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === 3) {
      loose.push(child);
      continue;
    }
    if (child.nodeType !== 1) continue;
    const el = child as Element;
    const tag = el.tagName.toLowerCase();
    if (skipped(el)) {
      continue;
    } else if (/^h[1-6]$/.test(tag)) {
      flushLoose();
      const text = oneLine(el);
      // A heading's own id is its anchor; the others get theirs once the page is whole (anchorHeadings).
      if (text) out.push({ kind: 'heading', level: Number(tag[1]), text, anchor: el.getAttribute('id') || undefined });
    } else if (tag === 'p' && classesOf(el).includes('admonition-title')) {
      // Sphinx's and MkDocs' box title ("Note", "See also") is a paragraph: a title all the same.
      flushLoose();
      const text = oneLine(el);
      if (text) out.push({ kind: 'heading', level: 6, text });
    } else if (tag === 'p') {
      flushLoose();
      const text = paragraph(textOf(el));
      if (text && !smallPrint([el])) out.push({ kind: 'text', text });
    } else if (tag === 'ul' || tag === 'ol') {
      flushLoose();
      const items = Array.from(el.children).filter((c) => c.tagName.toLowerCase() === 'li');
      const lines = items.map((li, i) => `${tag === 'ol' ? `${i + 1}.` : '-'} ${oneLine(li)}`);
      if (lines.length) out.push({ kind: 'list', text: lines.join('\n') });
    } else if (tag === 'dl') {
      flushLoose();
      definitionBlocks(el, out);
    } else if (tag === 'table') {
      flushLoose();
      const rows = Array.from(el.querySelectorAll('tr')).map((tr) => `| ${Array.from(tr.children).map((c) => oneLine(c)).join(' | ')} |`);
      if (rows.length) {
        const width = (rows[0]!.match(/\|/g)?.length ?? 2) - 1;
        out.push({ kind: 'table', text: [rows[0], `|${' --- |'.repeat(width)}`, ...rows.slice(1)].join('\n') });
      }
    } else if (tag === 'hr') {
      flushLoose();
      out.push({ kind: 'break', text: THEMATIC_BREAK });
    } else if (tag === 'pre') {
      flushLoose();
      // An HTML parser reads CR LF as LF; linkedom keeps the CR (AsciiDoc's pages are written with CR LF).
      const text = (el.textContent ?? '').replace(/\r\n?/g, '\n').trim();
      if (text) out.push({ kind: 'code', text });
    } else if (INLINE.has(tag)) {
      loose.push(el);
    } else if (boxed(el)) {
      flushLoose();
      out.push(...boxBlocks(el));
    } else {
      flushLoose();
      domBlocks(el, out);
    }
  }
  flushLoose();
}

/**
 * Deepest nesting of elements an HTML page may have. Real pages stay far below it (a few dozen
 * levels); Readability's cost grows faster than the square of the depth (a page of 2,000 nested
 * divs, 20 KB, took over a minute) and the block walk recurses, so a deeper page is refused rather
 * than read: the parser has one worker thread, and every document queued behind such a page would
 * wait.
 */
export const MAX_HTML_DEPTH = 256;

/** Refuses a page nested deeper than MAX_HTML_DEPTH, walking it without recursion. */
export function checkDepth(root: Node): void {
  const stack: Array<[Node, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_HTML_DEPTH) throw new Error(`The page's HTML is nested more than ${MAX_HTML_DEPTH} elements deep`);
    for (let child = node.firstChild; child; child = child.nextSibling) if (child.nodeType === 1) stack.push([child, depth + 1]);
  }
}

/**
 * A fragment of HTML (a block of raw HTML in Markdown) as blocks, read as a page's elements are: a
 * `<table>` becomes a table of rows under its header row, as an HTML page's does.
 */
export function fragmentBlocks(html: string): Block[] {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  checkDepth(document as unknown as Node);
  const blocks: Block[] = [];
  domBlocks(document.body as unknown as Element, blocks);
  return blocks;
}
