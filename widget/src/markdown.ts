import { Lexer, type Token, type Tokens } from 'marked';

/**
 * Markdown → DOM without ever parsing HTML. The model's text is untrusted (a prompt-injected page can
 * make it write anything), so `marked` is used only as a lexer; this module builds the nodes itself
 * with createElement/textContent. Raw HTML in the input is shown as literal text, link and image
 * URLs pass an allowlist, and images become links (loading a model-chosen URL would let the answer
 * beacon data out of the page).
 */
export function renderMarkdown(markdown: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  let tokens: Token[];
  try {
    tokens = Lexer.lex(markdown, { gfm: true, breaks: true });
  } catch {
    fragment.appendChild(paragraphOf(markdown));
    return fragment;
  }
  blocks(fragment, tokens);
  return fragment;
}

const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

/** An absolute http(s)/mailto URL, else null: `javascript:`, `data:`, `vbscript:` and relative URLs are refused. */
export function safeUrl(href: string | null | undefined): string | null {
  if (!href) return null;
  // URL parsing strips the tabs, newlines and control characters that hide `java\tscript:` tricks.
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null;
  }
  return SAFE_SCHEMES.has(url.protocol) ? url.href : null;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', hellip: '…', mdash: '—', ndash: '–' };

/** Decodes character references in text tokens (marked leaves them as written); the result only ever becomes a text node. */
function decodeEntities(text: string): string {
  return text.replace(/&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[body] ?? whole;
  });
}

function paragraphOf(text: string): HTMLElement {
  const p = document.createElement('p');
  p.textContent = text;
  return p;
}

function blocks(parent: Node, tokens: Token[]): void {
  for (const token of tokens) {
    const node = block(token);
    if (node) parent.appendChild(node);
  }
}

function block(token: Token): Node | null {
  switch (token.type) {
    case 'space':
    case 'def':
      return null;
    case 'heading': {
      // Headings inside a chat bubble stay small: h1/h2 of the answer are rendered one level as h3/h4.
      const t = token as Tokens.Heading;
      const el = document.createElement(t.depth <= 2 ? 'h3' : 'h4');
      inlines(el, t.tokens);
      return el;
    }
    case 'paragraph': {
      const el = document.createElement('p');
      inlines(el, (token as Tokens.Paragraph).tokens);
      return el;
    }
    case 'text': {
      const t = token as Tokens.Text;
      const span = document.createElement('span');
      if (t.tokens) inlines(span, t.tokens);
      else span.textContent = decodeEntities(t.text);
      return span;
    }
    case 'code': {
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      code.textContent = (token as Tokens.Code).text;
      pre.appendChild(code);
      return pre;
    }
    case 'blockquote': {
      const el = document.createElement('blockquote');
      blocks(el, (token as Tokens.Blockquote).tokens);
      return el;
    }
    case 'list': {
      const t = token as Tokens.List;
      const el = document.createElement(t.ordered ? 'ol' : 'ul');
      if (t.ordered && typeof t.start === 'number' && t.start !== 1) el.setAttribute('start', String(t.start));
      for (const item of t.items) {
        const li = document.createElement('li');
        for (const child of item.tokens) {
          if (child.type === 'checkbox') li.appendChild(document.createTextNode((child as Tokens.Checkbox).checked ? '☑ ' : '☐ '));
          else if (child.type === 'text' && !item.loose) inlines(li, (child as Tokens.Text).tokens ?? [child]);
          else {
            const node = block(child);
            if (node) li.appendChild(node);
          }
        }
        el.appendChild(li);
      }
      return el;
    }
    case 'table': {
      const t = token as Tokens.Table;
      const wrap = document.createElement('div');
      wrap.className = 'md-table';
      const table = document.createElement('table');
      const head = table.createTHead().insertRow();
      for (const cell of t.header) {
        const th = document.createElement('th');
        inlines(th, cell.tokens);
        head.appendChild(th);
      }
      const body = table.createTBody();
      for (const row of t.rows) {
        const tr = body.insertRow();
        for (const cell of row) inlines(tr.insertCell(), cell.tokens);
      }
      wrap.appendChild(table);
      return wrap;
    }
    case 'hr':
      return document.createElement('hr');
    case 'html':
      // Raw HTML from the model is shown, not interpreted.
      return paragraphOf((token as Tokens.HTML).text.trim());
    default:
      return 'raw' in token && typeof token.raw === 'string' ? paragraphOf(token.raw) : null;
  }
}

function inlines(parent: Node, tokens: Token[] | undefined): void {
  for (const token of tokens ?? []) {
    const node = inline(token);
    if (node) parent.appendChild(node);
  }
}

function inline(token: Token): Node | null {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      if (t.tokens?.length) {
        const span = document.createElement('span');
        inlines(span, t.tokens);
        return span;
      }
      return document.createTextNode(decodeEntities(t.text));
    }
    case 'escape':
      return document.createTextNode((token as Tokens.Escape).text);
    case 'strong':
    case 'em':
    case 'del': {
      const el = document.createElement(token.type === 'strong' ? 'strong' : token.type === 'em' ? 'em' : 'del');
      inlines(el, (token as Tokens.Strong).tokens);
      return el;
    }
    case 'codespan': {
      const el = document.createElement('code');
      el.textContent = (token as Tokens.Codespan).text;
      return el;
    }
    case 'br':
      return document.createElement('br');
    case 'link':
      return link((token as Tokens.Link).href, (token as Tokens.Link).title, (token as Tokens.Link).tokens);
    case 'image': {
      const t = token as Tokens.Image;
      return link(t.href, t.title, [{ type: 'text', raw: t.text, text: t.text || t.href } as Tokens.Text]);
    }
    case 'html':
      return document.createTextNode((token as Tokens.Tag).text);
    case 'checkbox':
      return document.createTextNode((token as Tokens.Checkbox).checked ? '☑ ' : '☐ ');
    default:
      return 'raw' in token && typeof token.raw === 'string' ? document.createTextNode(token.raw) : null;
  }
}

function link(href: string, title: string | null | undefined, tokens: Token[]): Node {
  const url = safeUrl(href);
  if (!url) {
    // An unsafe link keeps its words and loses its target.
    const span = document.createElement('span');
    inlines(span, tokens);
    return span;
  }
  const a = document.createElement('a');
  a.href = url;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  if (title) a.title = title;
  inlines(a, tokens);
  return a;
}
