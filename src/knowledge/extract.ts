import { createRequire } from 'node:module';
import { decodeDocument, looksBinary } from '../lib/text-encoding.js';
import { anchorHeadings } from './anchors.js';
import { BOILERPLATE_SELECTOR, checkDepth, domBlocks, normalize, oneLine, parseHTML, skipped } from './html-blocks.js';
import { markdownToPage } from './markdown.js';
import { textToPage } from './plain-text.js';
import type { Block, Page } from './types.js';

export { MAX_HTML_DEPTH } from './html-blocks.js';

/*
 * Readability and unpdf are loaded when an HTML page or a PDF is first read (linkedom too, see
 * parseHTML), so that a parser worker that reads only Markdown starts without them. Readability is
 * required because htmlToPage is synchronous.
 */
const require = createRequire(import.meta.url);
let readability: typeof import('@mozilla/readability') | undefined;

/**
 * The share of the page's words (without its boilerplate) that Readability's article must keep to be
 * read instead of the page. On documentation pages Readability often picks one part: PostgreSQL's
 * pg_dump page came out as its option list, without the synopsis and description.
 */
const ARTICLE_SHARE = 0.8;

const wordCount = (blocks: Block[]) => blocks.reduce((n, b) => n + (b.kind === 'break' ? 0 : b.text.split(/\s+/).filter(Boolean).length), 0);
const hasContent = (blocks: Block[]) => blocks.some((b) => b.kind !== 'heading' && b.kind !== 'break');

/** The element the page itself marks as its main content: `<main>`, `role="main"` or its only `<article>`. */
function mainLandmark(document: Document): Element | null {
  const main = document.querySelector('main, [role="main"]');
  if (main) return main;
  const articles = document.querySelectorAll('article');
  return articles.length === 1 ? articles[0]! : null;
}

/** Readability's article as blocks, or none when it finds no article. */
function articleBlocks(html: string): Block[] {
  const blocks: Block[] = [];
  readability ??= require('@mozilla/readability') as typeof import('@mozilla/readability');
  try {
    // Readability mutates the document it reads; it gets a copy of its own.
    const copy = parseHTML(html).document;
    for (const el of Array.from(copy.querySelectorAll(BOILERPLATE_SELECTOR))) el.remove();
    // Classes are kept: they tell a box (a note, a warning) from the text around it.
    const article = new readability.Readability(copy as unknown as Document, { charThreshold: 100, keepClasses: true }).parse();
    if (article?.content) {
      const { document: content } = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`);
      domBlocks(content.body as unknown as Element, blocks);
    }
  } catch {
    blocks.length = 0;
  }
  return blocks;
}


/**
 * The page's own title: its `<title>` without the site's name when the title is the page's h1
 * followed by a separator and the site ("pathlib — Object-oriented filesystem paths — Python 3.11.2
 * documentation", "Returns | Acme Help"), as documentation generators write it. A citation names
 * the page; the site is the project's.
 */
export function pageTitle(title: string, h1: string): string {
  if (!h1 || !title.startsWith(h1)) return title;
  return /^\s+[—–|·-]\s+\S/.test(title.slice(h1.length)) ? h1 : title;
}

/** Whether an element is shown with the page's words: neither it nor what holds it is skipped. */
function shown(el: Element): boolean {
  for (let at: Element | null = el; at; at = at.parentElement) if (skipped(at)) return false;
  return true;
}

/** The most a page's lead may hold: a header's title line and a sentence or two, not a section. */
const MAX_LEAD_BLOCKS = 3;
const MAX_LEAD_CHARS = 600;

/**
 * The article with the page's lead in front of it: what the element holding the page's h1 says after
 * the h1. Readability leaves out an element whose id or class reads like a site's header even when
 * it holds the page's own h1 and lead: a manual page built by AsciiDoc keeps its NAME line
 * ("git-cherry-pick - Apply the changes introduced by some existing commits"), the one sentence that
 * says what the page is for, in `<div id="header">` with its h1. The lead runs to the first line the
 * article holds, and is a few lines of text: one that holds a list (a table of contents, a menu), a
 * table or code, or runs past MAX_LEAD_BLOCKS blocks or MAX_LEAD_CHARS characters, is left out
 * whole. So is the lead of an h1 that stands in the body itself (what follows it there is the page,
 * which Readability chose from), and of an h1 that is a link (a site's logo).
 */
function withLead(article: Block[], h1: Element | null, root: Element): Block[] {
  const parent = h1?.parentElement;
  if (!h1 || !parent || parent === root || !root.contains(h1)) return article;
  const text = oneLine(h1 as unknown as Node);
  const link = h1.querySelector('a[href]');
  if (link && oneLine(link as unknown as Node) === text) return article;
  // An article that kept the h1 (as an h2) kept what follows it.
  if (article.some((b) => b.kind === 'heading' && b.text === text)) return article;
  const around: Block[] = [];
  domBlocks(parent, around);
  const at = around.findIndex((b) => b.kind === 'heading' && b.level === 1 && b.text === text);
  if (at < 0) return article;
  const held = new Set(article.map((b) => b.text));
  const next = around.findIndex((b, i) => i > at && held.has(b.text));
  const lead = around.slice(at + 1, next < 0 ? around.length : next);
  const size = lead.reduce((n, b) => n + b.text.length, 0);
  const plain = lead.every((b) => b.kind === 'text' || b.kind === 'heading');
  return hasContent(lead) && plain && lead.length <= MAX_LEAD_BLOCKS && size <= MAX_LEAD_CHARS ? [...lead, ...article] : article;
}

/**
 * An HTML page's main content as structure. The page's navigation, footer and sidebars (nav,
 * footer, aside and their ARIA landmark roles, DocBook's navigation bars, AsciiDoc's
 * `<div id="footer">`) are dropped first. When the page marks its main content (`<main>`,
 * `role="main"`, a single `<article>`), that is what is read. Otherwise Readability (the algorithm
 * behind Firefox's reader view) finds the article, which is read, with the page's lead in front of it
 * (`withLead`), when it keeps most of the page's words (`ARTICLE_SHARE`); else the body without its
 * header is read.
 */
export function htmlToPage(html: string, url: string | null, fallbackTitle = ''): Page {
  const { document } = parseHTML(html);
  checkDepth(document as unknown as Node);
  // The page's h1: the first one shown (a hidden modal's or a sidebar's is not the page's).
  const h1 = Array.from(document.querySelectorAll('h1')).find((el) => shown(el as unknown as Element)) ?? null;
  // The h1 as the page shows it, without a permalink mark ("json — JSON encoder and decoder¶").
  const h1Text = h1 ? oneLine(h1 as unknown as Node) : '';
  const title = pageTitle(normalize(document.querySelector('title')?.textContent), h1Text) || h1Text || fallbackTitle || url || 'Untitled';
  let blocks: Block[] = [];
  const main = mainLandmark(document as unknown as Document);
  if (main) domBlocks(main, blocks);
  if (!hasContent(blocks) && document.body) {
    const article = articleBlocks(html);
    for (const el of Array.from(document.body.querySelectorAll(`${BOILERPLATE_SELECTOR}, header, [role="banner"], script, style, noscript`))) el.remove();
    const body: Block[] = [];
    domBlocks(document.body as unknown as Element, body);
    blocks = hasContent(article) && wordCount(article) >= ARTICLE_SHARE * wordCount(body) ? withLead(article, h1 as unknown as Element | null, document.body as unknown as Element) : body;
  }
  if (h1Text && !blocks.some((b) => b.kind === 'heading' && (b.level === 1 || b.text === h1Text))) {
    // Readability removes the h1 that repeats the page title, and a header can hold it: put it back
    // so chunks keep the page's top heading in their path and its anchor. An h1 Readability made an
    // h2 (it does so with every h1 it keeps) is still there and is not repeated.
    blocks.unshift({ kind: 'heading', level: 1, text: h1Text, anchor: h1!.getAttribute('id') || undefined });
  }
  return { title, url, blocks: anchorHeadings(blocks) };
}

/** The links of an HTML page, absolute, without fragments. */
export function htmlLinks(html: string, base: string): string[] {
  const { document } = parseHTML(html);
  const links: string[] = [];
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    try {
      const url = new URL(a.getAttribute('href')!, base);
      url.hash = '';
      links.push(url.href);
    } catch {
      // not a URL: ignored
    }
  }
  return links;
}

/** A PDF's text, one heading per page so chunks keep a `#page=N` anchor. */
export async function pdfToPage(data: Uint8Array, title: string, url: string | null = null): Promise<Page> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(data);
  const { text } = await extractText(pdf, { mergePages: false });
  const blocks: Block[] = [];
  text.forEach((pageText, i) => {
    const page = textToPage(pageText, title);
    if (page.blocks.length === 0) return;
    if (text.length > 1) blocks.push({ kind: 'heading', level: 1, text: `Page ${i + 1}`, anchor: `page=${i + 1}` });
    blocks.push(...page.blocks);
  });
  await pdf.destroy();
  return { title: title || 'Document', url, blocks };
}

/** FAQ pairs: each question is a heading, its answer the text under it. */
export function faqToPage(items: Array<{ question: string; answer: string }>, title: string): Page {
  const blocks: Block[] = [];
  for (const item of items) {
    blocks.push({ kind: 'heading', level: 2, text: item.question.trim() });
    blocks.push(...textToPage(item.answer, title).blocks);
  }
  return { title: title || 'FAQ', url: null, blocks: anchorHeadings(blocks) };
}

/** Media types that say nothing of what a document is: its URL's extension decides, or else its bytes. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

/**
 * Picks the extractor from a content type (or, when the type says nothing, the URL's or title's
 * extension) and returns the page: PDF, HTML, Markdown or plain text, the text decoded as a browser
 * would (see decodeDocument), with an HTML page's links when `withLinks`. Anything else (an image,
 * an archive, a font, JSON) is not a document and is refused with a reason, as is binary data
 * served as text.
 */
export async function bodyToPage(body: Buffer, contentType: string, url: string | null, title: string, withLinks = false): Promise<{ page: Page; links: string[] }> {
  const kind = documentKind(contentType, url ?? title);
  if (kind === 'pdf') return { page: await pdfToPage(new Uint8Array(body), title, url), links: [] };
  const text = decodeDocument(body, contentType, kind === 'html');
  if (looksBinary(text)) throw new Error(`Not a text document: the response holds binary data${mediaType(contentType) ? ` (${mediaType(contentType)})` : ''}`);
  if (kind === 'html') return { page: htmlToPage(text, url, title), links: withLinks && url ? htmlLinks(text, url) : [] };
  return { page: kind === 'markdown' ? markdownToPage(text, title, url) : textToPage(text, title, url), links: [] };
}

const mediaType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** What a fetched body is, by its media type, or its name's extension when the type is generic. */
export function documentKind(contentType: string, name: string): 'pdf' | 'html' | 'markdown' | 'text' {
  const type = mediaType(contentType);
  const path = name.toLowerCase().split(/[?#]/)[0]!;
  if (GENERIC_TYPES.has(type)) {
    if (path.endsWith('.pdf')) return 'pdf';
    if (/\.x?html?$/.test(path)) return 'html';
    if (/\.(md|markdown)$/.test(path)) return 'markdown';
    return 'text';
  }
  if (type === 'application/pdf') return 'pdf';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  // A Markdown file served as plain text, as many servers serve `.md`.
  if (type === 'text/plain' && /\.(md|markdown)$/.test(path)) return 'markdown';
  if (type.startsWith('text/')) return 'text';
  throw new Error(`Not a document AnswerDesk reads (${type}): it reads HTML, Markdown, plain text and PDF`);
}
