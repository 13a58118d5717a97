import { marked, type Token, type Tokens } from 'marked';
import { anchorHeadings } from './anchors.js';
import { fragmentBlocks, superscript } from './html-blocks.js';
import { textToPage } from './plain-text.js';
import { THEMATIC_BREAK, type Block, type Page } from './types.js';

/** The named character references documentation writes; marked decodes numeric ones itself. */
const ENTITIES: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

const decodeEntities = (text: string) => (!text.includes('&') ? text : text.replace(/&(nbsp|amp|lt|gt|quot|apos|#39);/g, (_, name: string) => ENTITIES[name]!));

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * A soft line break as Markdown renders it, a space: the source was wrapped at a width, so a
 * sentence wrapped over two lines stays one sentence. Each line break, with the spaces and tabs
 * around it, becomes one space, in one pass: a pattern that starts with a run of blanks
 * (`[ \t]*\n`) is tried again from every blank of a run that no line break ends, which made a long
 * run of spaces (a crawled page's) cost seconds.
 */
function joinWrappedLines(text: string): string {
  if (!text.includes('\n')) return text;
  const lines = text.split('\n');
  return lines
    .map((line, i) => {
      let from = 0;
      let to = line.length;
      if (i > 0) while (from < to && isBlank(line[from])) from++;
      if (i < lines.length - 1) while (to > from && isBlank(line[to - 1])) to--;
      return line.slice(from, to);
    })
    .join(' ');
}

/**
 * Inline Markdown reduced to its words, read from marked's tokens rather than with patterns over
 * the source: a link (inline, or by reference: `[text][label]`, `[text][]`, `[text]` with its
 * definition) and an image keep their text, emphasis marks go, a code span is kept as written (its
 * `__proto__` is no emphasis), and a word's inner underscores are no emphasis (CommonMark's
 * flanking rule, which marked follows). HTML tags and comments are no words; a hard line break and
 * `<br>` are a line break, a soft one a space, and `<sup>…</sup>` a superscript (`2^31`).
 */
function inlineText(tokens: Token[] | undefined): string {
  let out = '';
  // Where each open <sup> started in `out`: its text is known at </sup>.
  const sups: number[] = [];
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'text': {
        const text = token as Tokens.Text;
        out += text.tokens ? inlineText(text.tokens) : joinWrappedLines(decodeEntities(text.text));
        break;
      }
      case 'escape':
      case 'codespan':
        out += (token as Tokens.Escape | Tokens.Codespan).text;
        break;
      case 'br':
        out += '\n';
        break;
      case 'html': {
        const tag = (token as Tokens.HTML).text;
        if (/^<br\s*\/?>$/i.test(tag)) out += '\n';
        else out = withSuperscripts(tag, out, sups);
        break;
      }
      case 'link':
      case 'image':
      case 'strong':
      case 'em':
      case 'del':
        out += inlineText((token as Tokens.Link | Tokens.Image | Tokens.Strong | Tokens.Em | Tokens.Del).tokens);
        break;
      case 'checkbox':
        break;
      default:
        // A token an extension adds: its source as written.
        out += 'text' in token && typeof token.text === 'string' ? token.text : token.raw;
    }
  }
  return out;
}

/**
 * Text on one line (a heading, a list item, a table cell): each run of line breaks, with the spaces
 * and tabs around it, becomes one space. Scanned from one line break to the next, not with a
 * pattern that starts with a run of blanks (`[ \t]*\n+`), which is tried again from every blank
 * of a run that no line break ends: a long one took seconds.
 */
function oneLine(text: string): string {
  if (!text.includes('\n')) return text.trim();
  let out = '';
  let from = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', from)) {
    let end = at;
    while (end > from && isBlank(text[end - 1])) end--;
    out += `${text.slice(from, end)} `;
    from = at;
    while (text[from] === '\n') from++;
    while (isBlank(text[from])) from++;
  }
  return (out + text.slice(from)).trim();
}

/**
 * Text being read tag by tag, `tag` the one just passed: an opening `<sup>` is remembered in `opens`
 * (where its text starts in `out`), and at its `</sup>` that text is written as a superscript
 * (`2^31`). Returns `out`, changed or not.
 */
function withSuperscripts(tag: string, out: string, opens: number[]): string {
  if (/^<sup[\s>]/i.test(tag)) opens.push(out.length);
  else if (/^<\/sup\s*>$/i.test(tag) && opens.length) {
    const start = opens.pop()!;
    return out.slice(0, start) + superscript(out.slice(start));
  }
  return out;
}

/**
 * The words of a block of raw HTML: comments go whole (a comment ends only at `-->`, so a
 * `<!-- YAML … 2<sup>31</sup> … -->` history block is no text), then the tags, each from a `<` to
 * the next `>` (a `<sup>` read as a superscript). Found by search rather than with `<[^>]*>`, which scans to the end again from
 * every `<` that no `>` follows.
 */
function htmlText(html: string): string {
  const text = html.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  let out = '';
  let from = 0;
  const sups: number[] = [];
  for (let open = text.indexOf('<'); open !== -1; open = text.indexOf('<', from)) {
    const close = text.indexOf('>', open + 1);
    if (close === -1) break;
    out += text.slice(from, open);
    from = close + 1;
    out = withSuperscripts(text.slice(open, from), out, sups);
  }
  return decodeEntities(out + text.slice(from)).trim();
}

/**
 * A list as lines, one per item, nested items too (indented two spaces a level), each with its own
 * mark (`-`, or its number) in place of the source's. An item's paragraphs are its line; what else
 * it holds (a code sample, a table) follows as lines indented under it.
 */
function listLines(list: Tokens.List, depth: number): string[] {
  const start = typeof list.start === 'number' ? list.start : 1;
  const indent = '  '.repeat(depth);
  return list.items.flatMap((item, i) => {
    const words: string[] = [];
    const after: string[] = [];
    for (const token of item.tokens) {
      if (token.type === 'list') {
        after.push(...listLines(token as Tokens.List, depth + 1));
        continue;
      }
      const blocks: Block[] = [];
      markdownBlocks([token], blocks);
      for (const block of blocks) {
        if (block.kind === 'text' && after.length === 0) words.push(oneLine(block.text));
        else after.push(...block.text.split('\n').map((line) => `${indent}  ${line}`));
      }
    }
    const mark = list.ordered ? `${start + i}.` : '-';
    return [`${indent}${mark} ${words.filter(Boolean).join(' ')}`.trimEnd(), ...after];
  });
}

function markdownBlocks(tokens: Token[], out: Block[]): void {
  for (const token of tokens) {
    switch (token.type) {
      case 'heading': {
        const heading = token as Tokens.Heading;
        const text = oneLine(inlineText(heading.tokens));
        out.push({ kind: 'heading', level: heading.depth, text });
        break;
      }
      case 'paragraph':
      case 'text': {
        const text = token as Tokens.Paragraph | Tokens.Text;
        out.push({ kind: 'text', text: (text.tokens ? inlineText(text.tokens) : joinWrappedLines(decodeEntities(text.text))).trim() });
        break;
      }
      case 'list':
        out.push({ kind: 'list', text: listLines(token as Tokens.List, 0).join('\n') });
        break;
      case 'table': {
        const table = token as Tokens.Table;
        const row = (cells: Tokens.TableCell[]) => `| ${cells.map((c) => oneLine(inlineText(c.tokens))).join(' | ')} |`;
        const lines = [row(table.header), `|${table.header.map(() => ' --- |').join('')}`, ...table.rows.map(row)];
        out.push({ kind: 'table', text: lines.join('\n') });
        break;
      }
      case 'code':
        out.push({ kind: 'code', text: (token as Tokens.Code).text });
        break;
      case 'blockquote':
        markdownBlocks((token as Tokens.Blockquote).tokens, out);
        break;
      case 'html': {
        const html = (token as Tokens.HTML).text;
        // A table (the Node.js docs write their constants as raw HTML tables) is read as the HTML
        // extractor reads one, rows under their header; any other block is its words.
        if (/<table[\s>]/i.test(html)) {
          out.push(...fragmentBlocks(html));
          break;
        }
        const text = htmlText(html);
        if (text) out.push({ kind: 'text', text });
        break;
      }
      case 'hr':
        out.push({ kind: 'break', text: THEMATIC_BREAK });
        break;
      default:
        break; // space, def (a link definition): no words
    }
  }
}

/**
 * How deep a line may nest: blockquote markers, and the columns of its indentation (a tab to the
 * next multiple of 4). Real documents stay far below; marked nests one call per level and costs
 * about the cube of the depth (a 64 KB list 250 levels deep held the thread for half a second, 800
 * levels 8.6 s) and overflows the stack on some thousands of `>`. A crawled site can serve such a
 * page; read in the worker thread, it would still hold up the documents queued behind it.
 */
export const MAX_QUOTE_DEPTH = 16;
export const MAX_INDENT_COLUMNS = 64;

/**
 * A line's leading blockquote markers and indentation cut to MAX_QUOTE_DEPTH markers and
 * MAX_INDENT_COLUMNS columns: items and quotes nested deeper become siblings at that depth, their
 * words kept. Lines within the bounds, all of them in real documents, are left as they are.
 */
export function boundNesting(markdown: string): string {
  return markdown.replace(/^[ \t>]+/gm, (prefix) => {
    let quotes = 0;
    let columns = 0;
    for (let i = 0; i < prefix.length; i++) {
      const c = prefix[i];
      columns += c === '\t' ? 4 - (columns % 4) : 1;
      if (c === '>') quotes++;
      // The rest of the prefix goes: the text then sits at the deepest level kept.
      if (quotes > MAX_QUOTE_DEPTH || columns > MAX_INDENT_COLUMNS) return prefix.slice(0, i);
    }
    return prefix;
  });
}

/**
 * A Markdown document as structure; the title is the first heading, else `fallbackTitle`. A
 * document marked cannot read (nested emphasis thousands deep overflows its stack) is read as plain
 * text rather than lost.
 */
export function markdownToPage(markdown: string, fallbackTitle: string, url: string | null = null): Page {
  const blocks: Block[] = [];
  try {
    markdownBlocks(marked.lexer(boundNesting(markdown)), blocks);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return textToPage(markdown, fallbackTitle, url);
  }
  const first = blocks.find((b) => b.kind === 'heading');
  return { title: fallbackTitle || first?.text || 'Untitled', url, blocks: anchorHeadings(blocks.filter((b) => b.text !== '')) };
}
