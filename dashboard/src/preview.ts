/**
 * The Widget page's live preview: the real widget script (/widget.js) on a page of its own, framed
 * by the dashboard. The form's unsaved values reach it by postMessage from the dashboard (same
 * origin only); the widget's calls to the API are answered here, in the page, so the preview shows
 * exactly the configuration being edited, needs no key, and sends nothing to the project.
 */

interface PreviewMessage {
  type: 'answerdesk:preview';
  config: Record<string, unknown>;
  open?: boolean;
}

interface WidgetGlobal {
  initAsync(options: { apiUrl: string; apiKey: string }): Promise<void>;
  open(): void;
  destroy(): void;
}

const API = `${location.origin}/preview-api/v1`;
let config: Record<string, unknown> = {};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const realFetch = window.fetch.bind(window);
window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!url.startsWith(API)) return realFetch(input, init);
  const path = url.slice(API.length).split('?')[0];
  const method = (init?.method ?? 'GET').toUpperCase();
  if (path === '/widget/config') return json(200, config);
  if (path === '/chat/conversations' && method === 'GET') return json(200, { conversations: [] });
  if (path === '/chat/conversations' && method === 'POST') return json(201, { conversationId: 'conv_preview' });
  if (path === '/chat/messages') return json(400, { error: 'This is a preview: messages are not sent. Install the widget on your site to chat.' });
  return json(404, { error: 'Not available in the preview' });
};

// The widget focuses its composer when it opens, and the preview opens it again after each change of
// the form: that would take the keyboard from the field being typed in (the next keys going into the
// preview). The preview takes the focus only once the person is in it (clicked or tabbed into it).
const focusElement = HTMLElement.prototype.focus;
HTMLElement.prototype.focus = function (this: HTMLElement, options?: FocusOptions) {
  if (document.hasFocus()) focusElement.call(this, options);
};

let generation = 0;
async function show(message: PreviewMessage): Promise<void> {
  const widget = (window as unknown as { AnswerDesk?: WidgetGlobal }).AnswerDesk;
  if (!widget) return;
  const mine = ++generation;
  config = message.config;
  try {
    widget.destroy();
  } catch {
    // Before the first start there is nothing to remove.
  }
  await widget.initAsync({ apiUrl: API, apiKey: 'ad_pk_preview' });
  if (mine === generation && message.open) widget.open();
  document.body.dataset.previewGeneration = String(mine);
}

window.addEventListener('message', (event: MessageEvent<PreviewMessage>) => {
  if (event.origin !== location.origin || event.data?.type !== 'answerdesk:preview') return;
  void show(event.data);
});
// Tell the dashboard the preview is listening.
window.parent.postMessage({ type: 'answerdesk:preview-ready' }, location.origin);
