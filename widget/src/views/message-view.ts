import { h, icon, ICONS } from '../dom.js';
import { renderMarkdown, safeUrl } from '../markdown.js';
import type { ChatMessage, Source, ToolActivity } from '../types.js';

export type Rating = 'POSITIVE' | 'NEGATIVE';

export interface MessageCallbacks {
  /** Sends a rating (and optional comment); rejects with a plain-words message on failure. */
  rate(messageId: string, rating: Rating, comment?: string): Promise<void>;
  retry(text: string): void;
}

/** Words for a tool call in progress; the knowledge search has its own, actions use their name. */
function toolLabel(tool: ToolActivity): string {
  if (tool.name === 'search_knowledge') {
    return tool.state === 'running' ? 'Searching the help center…' : tool.state === 'done' ? 'Searched the help center' : 'Help center search failed';
  }
  const name = tool.name.replace(/[_-]+/g, ' ').trim();
  return tool.state === 'running' ? `Working on it: ${name}…` : tool.state === 'done' ? `Done: ${name}` : `Could not complete: ${name}`;
}

/** Up to two initials of a person's name, for their avatar. */
function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  return ((words[0]?.[0] ?? '') + (words.length > 1 ? words[words.length - 1]![0] : '')).toUpperCase() || '?';
}

/**
 * Turns the `[1]` markers of an answer into links to its numbered sources: a source with a URL opens
 * it, one without brings its chip into view. Markers inside code, or past the last source, stay text.
 */
function linkCitations(root: HTMLElement, sources: Source[], chips: HTMLUListElement): void {
  if (!sources.length) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (/\[\d{1,2}\]/.test(n.nodeValue ?? '') && !n.parentElement?.closest('code, pre, a')) nodes.push(n as Text);
  }
  for (const node of nodes) {
    const parts = (node.nodeValue ?? '').split(/(\[\d{1,2}\])/);
    node.replaceWith(
      ...parts.map((part) => {
        const n = /^\[(\d{1,2})\]$/.exec(part) ? Number(part.slice(1, -1)) : 0;
        const source = sources[n - 1];
        if (!source) return part;
        const url = safeUrl(source.url);
        const link = h('a', { class: 'cite', href: url ?? '#', title: source.title, 'aria-label': `Source ${n}: ${source.title}`, ...(url ? { target: '_blank', rel: 'noopener noreferrer' } : {}) }, String(n));
        if (!url) {
          link.addEventListener('click', (event) => {
            event.preventDefault();
            const chip = chips.children[n - 1] as HTMLElement | undefined;
            chip?.scrollIntoView({ block: 'nearest' });
            (chip?.firstElementChild as HTMLElement | null)?.focus();
          });
        }
        return link;
      }),
    );
  }
}

/**
 * One message in the list. An assistant message is re-rendered as its text grows: the Markdown is
 * parsed again from the full text on each animation frame (a half-written list or link must render
 * as text until it closes), which stays cheap for chat-sized answers.
 */
export class MessageView {
  readonly el: HTMLLIElement;
  private readonly bubble: HTMLDivElement;
  private readonly tools: HTMLUListElement;
  private readonly sources: HTMLUListElement;
  private readonly footer: HTMLDivElement;
  private frame = 0;
  private feedbackFor: string | null = null;
  private rendered = { text: '', status: '' as ChatMessage['status'] | '', sources: 0 };

  constructor(
    private message: ChatMessage,
    private readonly callbacks: MessageCallbacks,
  ) {
    if (message.role === 'user') {
      this.el = h('li', { class: 'msg user' }, h('span', { class: 'sr-only' }, 'You: '), message.text);
      this.bubble = h('div');
      this.tools = h('ul');
      this.sources = h('ul');
      this.footer = h('div');
      return;
    }
    this.tools = h('ul', { class: 'tools', 'aria-label': 'Progress' });
    this.bubble = h('div', { class: 'bubble' });
    this.sources = h('ul', { class: 'sources', 'aria-label': 'Sources' });
    this.footer = h('div');
    const person = message.author?.type === 'human' ? message.author.name || 'Support team' : null;
    this.el = h(
      'li',
      { class: person ? 'msg assistant human' : 'msg assistant', 'data-status': message.status },
      person
        ? h('div', { class: 'author' }, h('span', { class: 'avatar', 'aria-hidden': 'true' }, initials(person)), h('span', { class: 'name' }, person))
        : h('span', { class: 'sr-only' }, 'Assistant: '),
      this.tools,
      this.bubble,
      this.sources,
      this.footer,
    );
    this.renderNow();
  }

  /** Schedules a re-render with the message's current state (at most once per frame). */
  update(message: ChatMessage): void {
    this.message = message;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderNow();
    });
  }

  /** Renders at once (end of stream, history): what the test or the reader sees is final. */
  flush(message: ChatMessage): void {
    this.message = message;
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.renderNow();
  }

  private renderNow(): void {
    const m = this.message;
    if (m.role === 'user') return;
    this.el.setAttribute('data-status', m.status);
    if (m.id) this.el.setAttribute('data-message-id', m.id);
    this.renderTools(m.tools);
    this.renderSources(m.sources);
    if (m.text !== this.rendered.text || m.status !== this.rendered.status || m.sources.length !== this.rendered.sources) {
      this.bubble.replaceChildren();
      if (m.text) {
        this.bubble.appendChild(renderMarkdown(m.text));
        linkCitations(this.bubble, m.sources, this.sources);
      } else if (m.status === 'streaming') this.bubble.appendChild(h('span', { class: 'typing', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')));
      this.bubble.hidden = !m.text && m.status !== 'streaming';
      this.rendered = { text: m.text, status: m.status, sources: m.sources.length };
    }
    this.renderFooter(m);
  }

  private renderTools(tools: ToolActivity[]): void {
    this.tools.replaceChildren(...tools.map((t) => h('li', { class: `tool ${t.state}`, 'data-tool': t.name }, toolLabel(t))));
    this.tools.hidden = tools.length === 0;
  }

  private renderSources(sources: Source[]): void {
    if (this.sources.childElementCount === sources.length) return;
    this.sources.replaceChildren(
      ...sources.map((s, i) => {
        const url = safeUrl(s.url);
        const label = s.title || s.url || 'Source';
        const num = h('span', { class: 'num' }, String(i + 1));
        return h(
          'li',
          { 'data-n': i + 1 },
          url
            ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', title: label }, num, icon(ICONS.link, 12), label)
            : h('span', { title: label, tabindex: -1 }, num, label),
        );
      }),
    );
    this.sources.hidden = sources.length === 0;
  }

  private renderFooter(m: ChatMessage): void {
    if (m.status === 'error') {
      if (this.footer.dataset.kind === `error:${m.error}`) return;
      this.footer.dataset.kind = `error:${m.error}`;
      const note = h('div', { class: 'error-note', role: 'alert' }, m.error ?? 'Something went wrong.');
      if (m.retryText !== undefined) {
        const retry = h('button', { type: 'button', class: 'retry' }, 'Try again');
        const text = m.retryText;
        retry.addEventListener('click', () => this.callbacks.retry(text));
        note.appendChild(retry);
      }
      this.footer.replaceChildren(note);
      return;
    }
    if (m.status === 'stopped') {
      if (this.footer.dataset.kind === 'stopped') return;
      this.footer.dataset.kind = 'stopped';
      this.footer.replaceChildren(h('div', { class: 'stopped' }, 'Stopped.'));
      if (m.id) this.footer.appendChild(this.feedback(m.id));
      return;
    }
    if (m.status === 'complete' && m.id && this.feedbackFor !== m.id && m.author?.type !== 'human') {
      this.feedbackFor = m.id;
      this.footer.dataset.kind = 'feedback';
      this.footer.replaceChildren(this.feedback(m.id));
    }
  }

  /** Thumbs up/down; after a rating, an optional comment that replaces the rating with rating + comment. */
  private feedback(messageId: string): HTMLElement {
    const up = h('button', { type: 'button', class: 'icon-btn', 'aria-pressed': 'false', 'aria-label': 'Helpful', title: 'Helpful', 'data-rating': 'POSITIVE' }, icon(ICONS.up, 16));
    const down = h('button', { type: 'button', class: 'icon-btn', 'aria-pressed': 'false', 'aria-label': 'Not helpful', title: 'Not helpful', 'data-rating': 'NEGATIVE' }, icon(ICONS.down, 16));
    const status = h('span', { class: 'thanks', role: 'status' });
    const wrap = h('div', { class: 'feedback-wrap' }, h('div', { class: 'feedback', role: 'group', 'aria-label': 'Rate this answer' }, up, down, status));
    let form: HTMLFormElement | null = null;

    const choose = async (rating: Rating) => {
      up.setAttribute('aria-pressed', String(rating === 'POSITIVE'));
      down.setAttribute('aria-pressed', String(rating === 'NEGATIVE'));
      status.textContent = 'Sending…';
      try {
        await this.callbacks.rate(messageId, rating);
        status.textContent = 'Thanks for your feedback!';
      } catch (err) {
        status.textContent = (err as Error).message;
        return;
      }
      form?.remove();
      form = this.commentForm(messageId, rating, status, () => (rating === 'POSITIVE' ? up : down).focus());
      wrap.appendChild(form);
    };
    up.addEventListener('click', () => void choose('POSITIVE'));
    down.addEventListener('click', () => void choose('NEGATIVE'));
    return wrap;
  }

  private commentForm(messageId: string, rating: Rating, status: HTMLElement, done: () => void): HTMLFormElement {
    const id = `c-${messageId}`;
    const textarea = h('textarea', { id, maxlength: 2000, rows: 2, placeholder: rating === 'NEGATIVE' ? 'What was wrong or missing?' : 'Anything to add?' });
    const form = h(
      'form',
      { class: 'feedback-form' },
      h('label', { for: id, class: 'sr-only' }, 'Comment (optional)'),
      textarea,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'btn primary' }, 'Send comment'), h('button', { type: 'button', class: 'btn skip' }, 'No thanks')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const comment = textarea.value.trim();
      if (!comment) return;
      status.textContent = 'Sending…';
      try {
        await this.callbacks.rate(messageId, rating, comment);
        status.textContent = 'Thanks, your comment was sent.';
        form.remove();
        done();
      } catch (err) {
        status.textContent = (err as Error).message;
      }
    });
    form.querySelector('.skip')!.addEventListener('click', () => {
      form.remove();
      done();
    });
    return form;
  }
}
