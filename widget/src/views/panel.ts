import { h, icon, ICONS } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { STYLES } from '../styles.js';
import type { ConversationSummary, Handoff, Skill, WidgetConfig } from '../types.js';

export interface PanelHandlers {
  toggle(): void;
  close(): void;
  send(text: string): void;
  stop(): void;
  newChat(): void;
  showHistory(): void;
  back(): void;
  startSkill(skill: Skill): void;
  openConversation(id: string): void;
  askForPerson(): void;
}

export type Screen = 'home' | 'chat' | 'history';

/** Black or white, whichever reads better on `color` (any CSS colour; resolved by the browser). */
function textOn(color: string, probe: HTMLElement): string {
  probe.style.color = '';
  probe.style.color = color;
  const match = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(getComputedStyle(probe).color);
  probe.style.color = '';
  if (!match) return '#ffffff';
  const [r, g, b] = match.slice(1, 4).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 ? '#111111' : '#ffffff';
}

function formatWhen(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * The widget's DOM: a launcher button and a chat panel in an open shadow root. It only renders and
 * reports what the visitor did; the controller owns state and talks to the API.
 */
export class PanelView {
  readonly host: HTMLElement;
  readonly shadow: ShadowRoot;
  readonly launcher: HTMLButtonElement;
  readonly panel: HTMLDivElement;
  readonly input: HTMLTextAreaElement;
  readonly messages: HTMLUListElement;
  private readonly root: HTMLDivElement;
  private readonly title: HTMLHeadingElement;
  private readonly backBtn: HTMLButtonElement;
  private readonly historyBtn: HTMLButtonElement;
  private readonly newBtn: HTMLButtonElement;
  private readonly body: HTMLDivElement;
  private readonly sendBtn: HTMLButtonElement;
  private readonly live: HTMLDivElement;
  private readonly branding: HTMLDivElement;
  private readonly launcherIcon: HTMLSpanElement;
  private readonly launcherText: HTMLSpanElement;
  private readonly handoffBar: HTMLDivElement;
  private fabText = '';
  private fabIcon: Node | null = null;
  private busy = false;
  screen: Screen = 'home';

  constructor(
    container: HTMLElement,
    private readonly handlers: PanelHandlers,
  ) {
    // A custom element name: page rules for div/button/etc. never match the host.
    this.host = document.createElement('answerdesk-widget');
    this.shadow = this.host.attachShadow({ mode: 'open' });
    // A constructed stylesheet is CSSOM, not inline markup, so a host page whose CSP forbids inline
    // styles still styles the widget; older browsers get a <style> element instead.
    let style: HTMLStyleElement | null = null;
    if ('adoptedStyleSheets' in Document.prototype && 'replaceSync' in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
      this.shadow.adoptedStyleSheets = [sheet];
    } else {
      style = document.createElement('style');
      style.textContent = STYLES;
    }

    this.launcherIcon = h('span', { class: 'fab-icon', 'aria-hidden': 'true' });
    this.launcherText = h('span', { class: 'fab-text' });
    this.launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'ad-panel', 'aria-label': 'Open support chat' }, this.launcherIcon, this.launcherText);
    this.launcher.addEventListener('click', () => handlers.toggle());

    this.backBtn = this.iconButton(ICONS.back, 'Back', () => handlers.back());
    this.title = h('h2', { id: 'ad-title' }, 'Support');
    this.historyBtn = this.iconButton(ICONS.history, 'Previous conversations', () => handlers.showHistory());
    this.newBtn = this.iconButton(ICONS.plus, 'New conversation', () => handlers.newChat());
    const closeBtn = this.iconButton(ICONS.close, 'Close chat', () => handlers.close());
    closeBtn.classList.add('close');

    this.messages = h('ul', { class: 'messages', 'aria-label': 'Conversation' });
    this.body = h('div', { class: 'body' });
    this.input = h('textarea', { id: 'ad-input', rows: 1, placeholder: 'Ask a question…', 'aria-label': 'Your message', maxlength: 8000, enterkeyhint: 'send' });
    this.sendBtn = h('button', { type: 'submit', class: 'send', 'aria-label': 'Send message' }, icon(ICONS.send));
    const composer = h('form', { class: 'composer' }, this.input, this.sendBtn);
    this.live = h('div', { class: 'sr-only', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'false' });
    this.handoffBar = h('div', { class: 'handoff', hidden: true });
    this.branding = h('div', { class: 'branding' }, 'Powered by ', h('a', { href: 'https://github.com/answerdesk/answerdesk', target: '_blank', rel: 'noopener noreferrer' }, 'AnswerDesk'));

    this.panel = h(
      'div',
      { id: 'ad-panel', class: 'panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'ad-title', hidden: true },
      h('div', { class: 'header' }, this.backBtn, this.title, this.historyBtn, this.newBtn, closeBtn),
      this.body,
      this.handoffBar,
      composer,
      this.branding,
      this.live,
    );
    this.root = h('div', { class: 'root' }, this.panel, this.launcher);
    if (style) this.shadow.append(style);
    this.shadow.append(this.root);

    composer.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.busy) return handlers.stop();
      this.submit();
    });
    this.input.addEventListener('keydown', (event) => {
      // Enter sends, Shift+Enter is a new line; IME composition (Japanese, Chinese…) keeps its Enter.
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!this.busy) this.submit();
      }
    });
    this.input.addEventListener('input', () => this.autosize());
    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        handlers.close();
      }
    });
    this.setScreen('home');
    container.appendChild(this.host);
  }

  private iconButton(paths: string[], label: string, onClick: () => void): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'icon-btn', 'aria-label': label, title: label }, icon(paths));
    button.addEventListener('click', onClick);
    return button;
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text) return;
    this.input.value = '';
    this.autosize();
    this.handlers.send(text);
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, 140)}px`;
  }

  /** Applies every WidgetConfig field that changes the look. */
  applyConfig(config: WidgetConfig): void {
    const style = this.host.style;
    style.setProperty('--ad-primary', config.primaryColor);
    style.setProperty('--ad-bg', config.bgColor);
    style.setProperty('--ad-text', config.textColor);
    style.setProperty('--ad-card', config.navigationCardColor);
    style.setProperty('--ad-font', config.fontFamily);
    style.setProperty('--ad-on-primary', textOn(config.primaryColor, this.launcherText));
    this.root.classList.toggle('left', config.position === 'bottom-left');
    this.branding.hidden = !config.showBranding;

    const fab = config.fabIcon.trim();
    // An <img> never runs script, even for an SVG data URL; the icon is decoration beside the button's label.
    this.fabIcon = /^(https?:|data:image\/)/i.test(fab)
      ? h('img', { src: fab, alt: '' })
      : fab
        ? h('span', { class: 'emoji' }, fab.slice(0, 8))
        : icon(ICONS.chat, 26);
    this.fabText = config.fabText;
    this.renderLauncher();
  }

  /**
   * The launcher shows the project's icon and text while closed, a close mark (and "Close") while open.
   * Its accessible name starts with the text it shows (WCAG 2.5.3, label in name), so a voice-control
   * user who says "click Ask us" reaches it.
   */
  private renderLauncher(): void {
    const open = this.isOpen;
    this.launcherIcon.replaceChildren(open ? icon(ICONS.close, 26) : (this.fabIcon ?? icon(ICONS.chat, 26)));
    const text = this.fabText.trim();
    this.launcherText.textContent = open && text ? 'Close' : this.fabText;
    this.launcherText.hidden = !text;
    const label = open ? 'Close support chat' : 'Open support chat';
    this.launcher.setAttribute('aria-label', open || !text || label.toLowerCase().includes(text.toLowerCase()) ? label : `${text} (${label.toLowerCase()})`);
  }

  /**
   * The bar above the composer: "Talk to a person" while the agent answers (when the project offers
   * it), then what the handoff means for the visitor: a person will reply here, or who is replying.
   */
  setHandoff(handoff: Handoff, config: WidgetConfig): void {
    const bar = this.handoffBar;
    if (handoff?.status === 'active') {
      bar.replaceChildren(h('p', { class: 'note' }, `You're chatting with ${handoff.assignee.name || 'our team'}.`));
    } else if (handoff?.status === 'requested') {
      bar.replaceChildren(
        h('p', { class: 'note' }, h('strong', {}, 'A person will reply here.'), config.handoff.officeHoursText ? ` ${config.handoff.officeHoursText}` : ''),
      );
    } else if (config.handoff.enabled) {
      const ask = h('button', { type: 'button', class: 'ask-person' }, 'Talk to a person');
      ask.addEventListener('click', () => this.handlers.askForPerson());
      bar.replaceChildren(ask);
    } else {
      bar.replaceChildren();
    }
    bar.dataset.state = handoff?.status ?? 'none';
    bar.hidden = !bar.childElementCount;
  }

  /** The conversation on screen has ended: said in the bar until the next one begins. */
  setEnded(): void {
    const bar = this.handoffBar;
    bar.replaceChildren(h('p', { class: 'note' }, h('strong', {}, 'This conversation has ended.'), ' Send a message to start a new one.'));
    bar.dataset.state = 'ended';
    bar.hidden = false;
  }

  setOpen(open: boolean): void {
    this.panel.hidden = !open;
    this.root.classList.toggle('open', open);
    this.launcher.setAttribute('aria-expanded', String(open));
    this.renderLauncher();
  }

  get isOpen(): boolean {
    return !this.panel.hidden;
  }

  /** While an answer streams, the send button is a stop button. */
  setBusy(busy: boolean): void {
    this.busy = busy;
    this.sendBtn.replaceChildren(icon(busy ? ICONS.stop : ICONS.send));
    this.sendBtn.setAttribute('aria-label', busy ? 'Stop answering' : 'Send message');
    this.sendBtn.classList.toggle('stop', busy);
  }

  setScreen(screen: Screen, title = 'Support'): void {
    this.screen = screen;
    this.title.textContent = title;
    this.backBtn.hidden = screen === 'home';
  }

  setHistoryAvailable(available: boolean): void {
    this.historyBtn.hidden = !available;
  }

  showHome(skills: Skill[], recent: ConversationSummary[] | null, userName: string | null, starters: string[] = []): void {
    this.setScreen('home');
    // Topics are promised only when there are some to pick.
    const intro = skills.length || starters.length ? 'Ask us anything, or pick a topic below.' : 'Ask us anything. We usually answer right away.';
    const home = h('div', { class: 'home' }, h('h3', {}, userName ? `Hi ${userName} 👋` : 'Hi there 👋'), h('p', {}, intro));
    if (starters.length) {
      const list = h('ul', { class: 'starters', 'aria-label': 'Suggested questions' });
      for (const question of starters) {
        const button = h('button', { type: 'button', class: 'starter' }, question);
        button.addEventListener('click', () => this.handlers.send(question));
        list.appendChild(h('li', {}, button));
      }
      home.appendChild(list);
    }
    if (skills.length) {
      home.appendChild(h('h4', { class: 'section-title', id: 'ad-skills' }, 'What can we help with?'));
      const list = h('ul', { class: 'cards', 'aria-labelledby': 'ad-skills' });
      for (const skill of skills) {
        const card = h('button', { type: 'button', class: 'card', 'data-skill-id': skill.id }, h('strong', {}, skill.name), skill.description ? h('span', {}, skill.description) : null);
        card.addEventListener('click', () => this.handlers.startSkill(skill));
        list.appendChild(h('li', {}, card));
      }
      home.appendChild(list);
    }
    if (recent?.length) {
      home.appendChild(h('h4', { class: 'section-title', id: 'ad-recent' }, 'Recent conversations'));
      home.appendChild(this.conversationList(recent.slice(0, 3), 'ad-recent'));
    }
    this.body.replaceChildren(home);
  }

  showChat(): void {
    this.setScreen('chat');
    this.body.replaceChildren(this.messages);
  }

  showHistory(list: ConversationSummary[] | null, error: string | null): void {
    this.setScreen('history', 'Your conversations');
    const content = error
      ? h('p', { class: 'error-note', role: 'alert' }, error)
      : list === null
        ? h('p', { class: 'empty' }, 'Loading…')
        : list.length === 0
          ? h('p', { class: 'empty' }, 'No previous conversations yet.')
          : this.conversationList(list, 'ad-title');
    this.body.replaceChildren(content);
  }

  private conversationList(list: ConversationSummary[], labelledBy: string): HTMLUListElement {
    const ul = h('ul', { class: 'cards history', 'aria-labelledby': labelledBy });
    for (const conv of list) {
      const item = h(
        'button',
        { type: 'button', class: 'history-item', 'data-conversation-id': conv.id },
        h('span', { class: 'preview' }, conv.lastMessagePreview || 'Conversation'),
        h('span', { class: 'when' }, `${formatWhen(conv.updatedAt)} · ${conv.messageCount} message${conv.messageCount === 1 ? '' : 's'}`),
      );
      item.addEventListener('click', () => this.handlers.openConversation(conv.id));
      ul.appendChild(h('li', {}, item));
    }
    return ul;
  }

  clearMessages(): void {
    this.messages.replaceChildren();
  }

  scrollToEnd(): void {
    this.body.scrollTop = this.body.scrollHeight;
  }

  /** Whether the reader is at (or near) the bottom; streaming only follows them there. */
  nearEnd(): boolean {
    return this.body.scrollHeight - this.body.scrollTop - this.body.clientHeight < 80;
  }

  /**
   * Adds words for screen readers (polite live region); older announcements are pruned. Answers are
   * Markdown: what is read out is the text the bubble shows ("from Settings."), not its marks
   * ("from **Settings**.", read as "star star").
   */
  announce(text: string): void {
    const shown = renderMarkdown(text);
    // Blocks (paragraphs, list items, cells) are read apart, as they are seen apart.
    shown.querySelectorAll('p, li, h1, h2, h3, h4, h5, h6, pre, blockquote, td, th').forEach((block) => block.append(' '));
    const spoken = (shown.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!spoken) return;
    this.live.appendChild(h('p', {}, spoken));
    while (this.live.childElementCount > 20) this.live.firstElementChild!.remove();
  }

  focusInput(): void {
    this.input.focus();
  }

  destroy(): void {
    this.host.remove();
  }
}
