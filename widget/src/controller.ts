import { applyAnswerStream, type AnswerOutcome, type AnswerSink } from './answer-stream.js';
import { ApiClient, ApiError, describeError } from './client.js';
import { Emitter } from './emitter.js';
import { followConversation } from './live-events.js';
import { collectPageContext } from './page-context.js';
import { clearState, loadState, saveState } from './storage.js';
import { DEFAULT_CONFIG, type ChatMessage, type ConversationSummary, type Handoff, type HistoryMessage, type InitOptions, type Skill, type WidgetConfig, type WidgetUser } from './types.js';
import { MessageView, type Rating } from './views/message-view.js';
import { PanelView } from './views/panel.js';

/** A message on screen, with the conversation it belongs to (for feedback). */
interface Entry {
  message: ChatMessage;
  view: MessageView;
  conversationId: string | null;
  /** An answer's stored form, when the live stream brought it while the answer's own stream was still read. */
  stored?: HistoryMessage;
}

/** The send failed because the conversation is gone; the controller starts a new one and sends again. */
const STALE_CONVERSATION = new Set(['Conversation expired', 'Invalid conversation']);

/**
 * State and behaviour of one widget instance: who the visitor is, which conversation is open, the
 * streaming answer. Views only render; everything that talks to the API is here.
 */
export class WidgetController {
  readonly events = new Emitter();
  private readonly client: ApiClient;
  private readonly view: PanelView;
  private config: WidgetConfig = DEFAULT_CONFIG;
  private user: WidgetUser | null = null;
  private verified = false;
  private conversationId: string | null = null;
  private messages: Entry[] = [];
  private recent: ConversationSummary[] | null = null;
  private streaming: AbortController | null = null;
  private handoff: Handoff = null;
  /** The open conversation's live events (a person's replies, handoff changes). */
  private live: { stop(): void } | null = null;
  /** Bumped whenever the visitor's context changes (identify, reset, new chat), so late answers of the old context are dropped. */
  private epoch = 0;

  constructor(private readonly options: InitOptions) {
    this.client = new ApiClient(options.apiUrl, options.apiKey);
    this.view = new PanelView(options.container ?? document.body, {
      toggle: () => this.toggle(),
      close: () => this.close(),
      send: (text) => void this.send(text),
      stop: () => this.stop(),
      newChat: () => this.newChat(),
      showHistory: () => void this.showHistory(),
      back: () => this.showHome(),
      startSkill: (skill) => this.startSkill(skill),
      openConversation: (id) => void this.openConversation(id),
      askForPerson: () => void this.askForPerson(),
    });
    this.view.applyConfig(this.config);
  }

  /** Loads the project's configuration, proves the user's identity, and brings back their last conversation. */
  async init(): Promise<void> {
    const [config] = await Promise.all([this.loadConfig(), this.setUser(this.options.user ?? null)]);
    this.config = config;
    this.view.applyConfig(config);
    this.setHandoff(this.handoff);
    await this.restore();
    this.events.emit('ready', { config });
  }

  private async loadConfig(): Promise<WidgetConfig> {
    try {
      const config = await this.client.json<Partial<WidgetConfig>>('GET', '/widget/config');
      return {
        ...DEFAULT_CONFIG,
        ...config,
        availableSkills: Array.isArray(config.availableSkills) ? config.availableSkills : [],
        starterQuestions: Array.isArray(config.starterQuestions) ? config.starterQuestions.filter((q) => typeof q === 'string') : [],
        handoff: { ...DEFAULT_CONFIG.handoff, ...config.handoff },
      };
    } catch (err) {
      // The chat still works with the default look; the page owner learns why through the error event.
      this.events.emit('error', { message: `Could not load the widget configuration: ${describeError(err)}`, status: (err as ApiError).status });
      return DEFAULT_CONFIG;
    }
  }

  /** Sets the visitor; with `hmac`, asks /identity/verify and then sends `x-user-hmac` on every call. */
  private async setUser(user: WidgetUser | null): Promise<void> {
    const current = user && typeof user.id === 'string' && user.id ? user : null;
    this.user = current;
    this.verified = false;
    this.client.identity = current ? { userId: current.id, hmac: null } : null;
    if (!current?.hmac) return;
    const { id, email, name, hmac } = current;
    try {
      await this.client.json('POST', '/identity/verify', { userId: id, hmac, ...(email ? { email } : {}), ...(name ? { name } : {}) });
      // Another identify() or reset() came while this one was verified: its user is no longer the visitor.
      if (this.user !== current) return;
      this.verified = true;
      this.client.identity = { userId: id, hmac };
    } catch (err) {
      if (this.user !== current) return;
      this.events.emit('error', { message: `Identity verification failed: ${describeError(err)}`, status: (err as ApiError).status });
    }
  }

  private get userId(): string | null {
    return this.user?.id ?? null;
  }

  /** Reopens the conversation saved for this (project, user), else shows the home screen. */
  private async restore(): Promise<void> {
    const saved = loadState(this.options.apiKey, this.userId);
    if (saved && (await this.openConversation(saved.conversationId, true))) return;
    if (saved) clearState(this.options.apiKey, this.userId);
    this.showHome();
  }

  open(): void {
    if (this.view.isOpen) return;
    this.view.setOpen(true);
    this.view.focusInput();
    if (this.view.screen === 'chat') this.view.scrollToEnd();
    this.events.emit('open', {});
  }

  close(): void {
    if (!this.view.isOpen) return;
    this.view.setOpen(false);
    this.view.launcher.focus();
    this.events.emit('close', {});
  }

  toggle(): void {
    if (this.view.isOpen) this.close();
    else this.open();
  }

  /** Switches to another visitor: their own saved conversation, their own history. */
  async identify(user: WidgetUser): Promise<void> {
    this.abortAnswer();
    const epoch = ++this.epoch;
    this.resetConversation();
    await this.setUser(user);
    // A later identify() or reset() took over while this user was being verified.
    if (epoch !== this.epoch) return;
    this.events.emit('identify', { userId: user.id, verified: this.verified });
    await this.restore();
  }

  /** Logout: forgets the visitor and what this browser stored for them and for the anonymous visitor. */
  reset(): void {
    this.abortAnswer();
    this.epoch++;
    clearState(this.options.apiKey, this.userId);
    clearState(this.options.apiKey, null);
    this.user = null;
    this.verified = false;
    this.client.identity = null;
    this.resetConversation();
    this.showHome();
    this.events.emit('reset', {});
  }

  destroy(): void {
    this.abortAnswer();
    this.live?.stop();
    this.view.destroy();
  }

  private resetConversation(): void {
    this.live?.stop();
    this.live = null;
    this.conversationId = null;
    this.messages = [];
    this.recent = null;
    this.view.clearMessages();
    this.setHandoff(null);
  }

  private setHandoff(handoff: Handoff): void {
    const changed = JSON.stringify(handoff) !== JSON.stringify(this.handoff);
    this.handoff = handoff;
    this.view.setHandoff(handoff, this.config);
    if (!changed) return;
    if (handoff?.status === 'requested') this.view.announce(`A person will reply here. ${this.config.handoff.officeHoursText ?? ''}`);
    else if (handoff?.status === 'active') this.view.announce(`${handoff.assignee.name || 'A person'} joined the conversation.`);
    this.events.emit('handoff', { conversationId: this.conversationId ?? '', handoff });
  }

  /** Follows the open conversation live: messages written elsewhere (a person, another tab) and handoff changes. */
  private follow(conversationId: string): void {
    this.live?.stop();
    const epoch = this.epoch;
    this.live = followConversation(this.client, conversationId, {
      message: (m) => {
        if (epoch === this.epoch && this.conversationId === conversationId) this.receive(m);
      },
      handoff: (handoff) => {
        if (epoch === this.epoch && this.conversationId === conversationId) this.setHandoff(handoff);
      },
      closed: () => {
        if (epoch === this.epoch && this.conversationId === conversationId) this.ended(conversationId);
      },
    });
  }

  /**
   * The open conversation was closed (by the team, or idle too long): its messages stay on screen,
   * and the next message starts a new conversation instead of failing in the old one.
   */
  private ended(conversationId: string): void {
    this.live = null;
    this.conversationId = null;
    this.recent = null;
    clearState(this.options.apiKey, this.userId);
    this.setHandoff(null);
    this.view.setEnded();
    this.view.announce('This conversation has ended. Send a message to start a new one.');
    this.events.emit('conversation:end', { conversationId });
  }

  /** A message from the live stream: shown unless it is already on screen (the stream replays from the start). */
  private receive(m: HistoryMessage): void {
    const shown = this.messages.find((e) => e.message.id === m.id);
    if (shown) {
      // Its stream was cut on the way (the network, not the server), which still finished and stored
      // it: the whole answer replaces the interrupted one.
      if (shown.message.status === 'error') this.recover(shown, m);
      else if (shown.message.status === 'streaming') shown.stored = m;
      return;
    }
    if (m.role === 'user') {
      // The visitor's own message, typed here: it was shown before the server gave it an id.
      const mine = this.messages.find((e) => e.message.role === 'user' && e.message.id === null && e.message.text === m.content);
      if (mine) {
        mine.message = { ...mine.message, id: m.id };
        return;
      }
    }
    // The answer streaming now arrives here too once stored; its id came with `start`.
    if (m.role === 'assistant' && m.author?.type !== 'human' && this.streaming) return;
    const follow = this.view.nearEnd();
    this.addMessage(fromHistory(m));
    this.view.showChat();
    if (follow) this.view.scrollToEnd();
    if (m.author?.type === 'human') {
      this.view.announce(`${m.author.name}: ${m.content}`);
      this.events.emit('message:received', { conversationId: this.conversationId ?? '', messageId: m.id, text: m.content });
    }
  }

  /** Shows the stored form of an answer whose stream broke off here, when the server completed it. */
  private recover(entry: Entry, stored: HistoryMessage): boolean {
    if (entry.message.role !== 'assistant' || stored.role !== 'assistant' || stored.status !== 'complete') return false;
    entry.message = fromHistory(stored);
    entry.view.flush(entry.message);
    this.view.announce(stored.content);
    this.events.emit('message:received', { conversationId: entry.conversationId ?? '', messageId: stored.id, text: stored.content });
    return true;
  }

  /** "Talk to a person": starts a conversation if there is none, then asks for a person in it. */
  private async askForPerson(): Promise<void> {
    const epoch = this.epoch;
    try {
      const conversationId = this.conversationId ?? (await this.createConversation());
      const { handoff } = await this.client.json<{ handoff: Handoff }>('POST', `/chat/conversations/${encodeURIComponent(conversationId)}/handoff`, { reason: 'The visitor asked for a person.' });
      if (epoch !== this.epoch) return;
      this.view.showChat();
      this.setHandoff(handoff);
    } catch (err) {
      this.view.announce(describeError(err));
      this.events.emit('error', { message: describeError(err), status: (err as ApiError).status });
    }
  }

  private newChat(): void {
    this.abortAnswer();
    this.epoch++;
    clearState(this.options.apiKey, this.userId);
    this.resetConversation();
    this.showHome();
    this.view.focusInput();
  }

  private showHome(): void {
    if (this.messages.length) {
      this.view.showChat();
      this.view.scrollToEnd();
    } else {
      this.view.showHome(this.config.availableSkills, this.recent, this.user?.name ?? null, this.config.starterQuestions);
      void this.loadRecent();
    }
    this.view.setHistoryAvailable(this.userId !== null);
  }

  /** The user's last few conversations for the home screen (identified users only). */
  private async loadRecent(): Promise<void> {
    if (this.userId === null || this.recent !== null) return;
    const epoch = this.epoch;
    try {
      const { conversations } = await this.client.json<{ conversations: ConversationSummary[] }>('GET', `/chat/conversations?userId=${encodeURIComponent(this.userId)}&limit=20`);
      if (epoch !== this.epoch) return;
      this.recent = conversations;
      if (this.view.screen === 'home' && !this.messages.length) this.view.showHome(this.config.availableSkills, conversations, this.user?.name ?? null, this.config.starterQuestions);
    } catch {
      // The home screen works without the list; the history screen shows the error when asked.
    }
  }

  private async showHistory(): Promise<void> {
    if (this.userId === null) return;
    const epoch = this.epoch;
    this.view.showHistory(null, null);
    try {
      const { conversations } = await this.client.json<{ conversations: ConversationSummary[] }>('GET', `/chat/conversations?userId=${encodeURIComponent(this.userId)}&limit=20`);
      if (epoch !== this.epoch) return;
      this.recent = conversations;
      this.view.showHistory(conversations, null);
    } catch (err) {
      if (epoch === this.epoch) this.view.showHistory(null, describeError(err));
    }
  }

  /** Loads a conversation's messages and shows them; returns false when it cannot be read. */
  private async openConversation(id: string, quiet = false): Promise<boolean> {
    this.abortAnswer();
    const epoch = ++this.epoch;
    try {
      const data = await this.client.json<{ conversationId: string; messages: HistoryMessage[]; handoff?: Handoff }>('GET', `/chat/conversations/${encodeURIComponent(id)}`);
      if (epoch !== this.epoch) return false;
      this.resetConversation();
      this.conversationId = data.conversationId;
      this.setHandoff(data.handoff ?? null);
      this.follow(data.conversationId);
      saveState(this.options.apiKey, this.userId, { conversationId: data.conversationId });
      for (const m of data.messages) this.addMessage(fromHistory(m));
      if (this.messages.length) this.view.showChat();
      else this.showHome();
      this.view.setHistoryAvailable(this.userId !== null);
      this.view.scrollToEnd();
      if (!quiet) this.view.focusInput();
      return true;
    } catch (err) {
      if (!quiet && epoch === this.epoch) this.view.showHistory(this.recent, describeError(err));
      return false;
    }
  }

  private addMessage(message: ChatMessage): Entry {
    // The first answer of a conversation is added before the conversation exists; its id is filled in later.
    const entry: Entry = { message, view: null as unknown as MessageView, conversationId: this.conversationId };
    entry.view = new MessageView(message, {
      rate: (messageId, rating, comment) => this.rate(entry.conversationId, messageId, rating, comment),
      retry: (text) => void this.send(text),
    });
    const view = entry.view;
    this.messages.push(entry);
    this.view.messages.appendChild(view.el);
    return entry;
  }

  private startSkill(skill: Skill): void {
    void this.send(skill.name);
  }

  private async rate(conversationId: string | null, messageId: string, rating: Rating, comment?: string): Promise<void> {
    if (!conversationId) throw new Error('This answer cannot be rated.');
    try {
      await this.client.json('POST', '/chat/feedback', { conversationId, messageId, rating, ...(comment ? { comment } : {}) });
    } catch (err) {
      throw new Error(describeError(err));
    }
    this.events.emit('feedback', { conversationId, messageId, rating });
  }

  stop(): void {
    this.streaming?.abort();
  }

  private abortAnswer(): void {
    this.streaming?.abort();
    this.streaming = null;
    this.view.setBusy(false);
  }

  private async createConversation(): Promise<string> {
    const body = this.userId !== null ? { endUserExternalId: this.userId } : undefined;
    const { conversationId } = await this.client.json<{ conversationId: string }>('POST', '/chat/conversations', body);
    this.conversationId = conversationId;
    saveState(this.options.apiKey, this.userId, { conversationId });
    this.recent = null;
    // A new conversation has no handoff, and an "ended" note from the one before goes.
    this.setHandoff(null);
    this.follow(conversationId);
    this.events.emit('conversation:start', { conversationId });
    return conversationId;
  }

  /** Sends the visitor's text and streams the answer into a new assistant message. */
  async send(text: string, isRetryAfterStale = false): Promise<void> {
    if (this.streaming || !text.trim()) return;
    const epoch = this.epoch;
    this.view.showChat();
    this.view.setHistoryAvailable(this.userId !== null);
    if (!isRetryAfterStale) this.addMessage({ id: null, role: 'user', text, sources: [], tools: [], status: 'complete' });
    const controller = new AbortController();
    this.streaming = controller;
    this.view.setBusy(true);
    let conversationId = this.conversationId;
    const reply = this.addMessage({ id: null, role: 'assistant', text: '', sources: [], tools: [], status: 'streaming' });
    this.view.scrollToEnd();
    try {
      conversationId ??= await this.createConversation();
      reply.conversationId = conversationId;
      const response = await this.client.request(
        'POST',
        '/chat/messages',
        { conversationId, messages: [{ role: 'user', content: text, parts: [{ type: 'text', text }] }], pageContext: collectPageContext() },
        controller.signal,
      );
      this.events.emit('message:sent', { conversationId, text });
      this.recent = null;
      await this.consume(response, reply, controller.signal);
    } catch (err) {
      if (epoch !== this.epoch) return;
      if (controller.signal.aborted) {
        this.finishReply(reply, { status: 'stopped' });
      } else if (err instanceof ApiError && err.status === 400 && STALE_CONVERSATION.has(err.serverMessage) && !isRetryAfterStale) {
        // The saved conversation ended (idle too long, closed by staff): continue in a new one.
        this.removeMessage(reply);
        this.conversationId = null;
        clearState(this.options.apiKey, this.userId);
        this.streaming = null;
        this.view.announce('That conversation had ended, so a new one was started.');
        return this.send(text, true);
      } else {
        this.finishReply(reply, { status: 'error', error: describeError(err), retryText: text });
        this.events.emit('error', { message: describeError(err), status: (err as ApiError).status });
      }
    } finally {
      if (this.streaming === controller) {
        this.streaming = null;
        this.view.setBusy(false);
      }
    }
  }

  private removeMessage(entry: { view: MessageView }): void {
    entry.view.el.remove();
    this.messages = this.messages.filter((m) => m !== entry);
  }

  private finishReply(entry: Entry, patch: Partial<ChatMessage>): void {
    entry.message = { ...entry.message, ...patch };
    entry.view.flush(entry.message);
    if (patch.error) this.view.announce(patch.error);
  }

  /** Streams the answer into `entry`, then settles it as complete, failed (with retry) or stopped. */
  private async consume(response: Response, entry: Entry, signal: AbortSignal): Promise<void> {
    if (!response.body) throw new Error('empty response');
    const sink: AnswerSink = {
      current: () => entry.message,
      patch: (patch) => {
        const follow = this.view.nearEnd();
        entry.message = { ...entry.message, ...patch };
        entry.view.update(entry.message);
        if (follow) requestAnimationFrame(() => this.view.scrollToEnd());
      },
      announce: (text) => this.view.announce(text),
    };
    let outcome: AnswerOutcome;
    try {
      outcome = await applyAnswerStream(response.body, sink, signal);
    } catch (err) {
      // The connection broke while reading (offline, a proxy, a network change): the answer was
      // interrupted here, not on the server, which finishes and stores it all the same.
      if (signal.aborted) throw err;
      outcome = { finished: false, error: null };
    }
    if (signal.aborted) return this.finishReply(entry, { status: 'stopped' });
    if (outcome.handoff !== undefined) this.setHandoff(outcome.handoff);
    // With a person, a send has no answer: the message is theirs to reply to.
    if (outcome.finished && !outcome.error && !entry.message.text && outcome.handoff) return this.removeMessage(entry);
    const retryText = this.lastUserText(entry);
    if (outcome.error) return this.finishReply(entry, { status: 'error', error: outcome.error, retryText });
    if (!outcome.finished) {
      // The live stream may have brought the stored answer already; else it brings it once stored.
      if (entry.stored && this.recover(entry, entry.stored)) return;
      return this.finishReply(entry, { status: 'error', error: 'The answer was interrupted. Please try again.', retryText });
    }
    this.finishReply(entry, { status: 'complete' });
    this.events.emit('message:received', { conversationId: entry.conversationId ?? '', messageId: entry.message.id, text: entry.message.text });
  }

  private lastUserText(entry: { message: ChatMessage }): string | undefined {
    const index = this.messages.findIndex((m) => m.message === entry.message);
    for (let i = (index < 0 ? this.messages.length : index) - 1; i >= 0; i--) {
      if (this.messages[i].message.role === 'user') return this.messages[i].message.text;
    }
    return undefined;
  }
}

/** A stored message as the widget shows it: sources from the stored citations, no tool progress. */
function fromHistory(m: HistoryMessage): ChatMessage {
  return {
    author: m.author,
    id: m.id,
    role: m.role,
    text: m.content,
    tools: [],
    sources: (m.sources ?? []).map((s, i) => ({ id: s.sourceId ?? `${m.id}-${i}`, url: s.url, title: s.title || s.url || 'Source' })),
    status: m.role === 'user' ? 'complete' : m.status === 'error' ? 'error' : 'complete',
    error: m.status === 'error' ? 'This answer did not finish.' : undefined,
  };
}
