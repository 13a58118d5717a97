/** The end user as the host page knows them; `hmac` is the hex HMAC-SHA256 of `id` made by the host's server. */
export interface WidgetUser {
  id: string;
  email?: string;
  name?: string;
  hmac?: string;
}

/** Options of `AnswerDesk.initAsync`. */
export interface InitOptions {
  /** Base URL of the API, ending in `/api/v1`. */
  apiUrl: string;
  /** The project's public key (`ad_pk_…`). */
  apiKey: string;
  user?: WidgetUser;
  /** Where to mount the widget; default `document.body`. */
  container?: HTMLElement;
}

export interface Skill {
  id: string;
  name: string;
  description: string;
}

/** GET /widget/config. */
export interface WidgetConfig {
  showBranding: boolean;
  position: 'bottom-right' | 'bottom-left';
  primaryColor: string;
  bgColor: string;
  textColor: string;
  navigationCardColor: string;
  fontFamily: string;
  fabIcon: string;
  fabText: string;
  availableSkills: Skill[];
  /** Questions the home screen offers as buttons. */
  starterQuestions: string[];
  /** Whether "Talk to a person" is offered, and what to say while waiting. */
  handoff: { enabled: boolean; officeHoursText: string | null };
}

/** A conversation's handoff to a person: waiting for one, or with one. */
export type Handoff =
  | null
  | { status: 'requested'; requestedAt: string; reason: string | null }
  | { status: 'active'; assignee: { id: string | null; name: string }; acceptedAt: string };

/** Who wrote an assistant message: the agent, or a person (with their name). */
export type Author = { type: 'agent' } | { type: 'human'; id?: string | null; name: string };

/** Used until (or if never) the project's configuration arrives. */
export const DEFAULT_CONFIG: WidgetConfig = {
  showBranding: true,
  position: 'bottom-right',
  primaryColor: '#2563eb',
  bgColor: '#ffffff',
  textColor: '#111827',
  navigationCardColor: '#f3f4f6',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fabIcon: '',
  fabText: '',
  availableSkills: [],
  starterQuestions: [],
  handoff: { enabled: false, officeHoursText: null },
};

export interface Source {
  id: string;
  url?: string;
  title: string;
}

export interface ToolActivity {
  id: string;
  name: string;
  state: 'running' | 'done' | 'error';
}

/** A message as the widget shows it, whether streamed now or read back from history. */
export interface ChatMessage {
  /** Server id: the user message's id is unknown to the widget; the assistant's comes with `start`. */
  id: string | null;
  role: 'user' | 'assistant';
  text: string;
  sources: Source[];
  tools: ToolActivity[];
  status: 'streaming' | 'complete' | 'error' | 'stopped';
  /** Plain-words failure shown under the message. */
  error?: string;
  /** For a failed answer: the user text to send again. */
  retryText?: string;
  /** A person's reply shows their name and initials. */
  author?: Author;
}

/** GET /chat/conversations item. */
export interface ConversationSummary {
  id: string;
  status: string;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
  lastMessagePreview: string;
  lastMessageRole: string;
}

/** GET /chat/conversations/{id} message. */
export interface HistoryMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
  status?: 'complete' | 'streaming' | 'error';
  sources?: Array<{ sourceId?: string; type?: string; url?: string; title?: string }>;
  author?: Author;
}

/** Events the host page can listen to with `AnswerDesk.on`. */
export interface WidgetEvents {
  ready: { config: WidgetConfig };
  open: Record<string, never>;
  close: Record<string, never>;
  'conversation:start': { conversationId: string };
  /** The conversation was closed by the team or idled past its time; the next message starts a new one. */
  'conversation:end': { conversationId: string };
  'message:sent': { conversationId: string; text: string };
  'message:received': { conversationId: string; messageId: string | null; text: string };
  feedback: { conversationId: string; messageId: string; rating: 'POSITIVE' | 'NEGATIVE' };
  identify: { userId: string; verified: boolean };
  reset: Record<string, never>;
  handoff: { conversationId: string; handoff: Handoff };
  error: { message: string; status?: number };
}
