import { WidgetController } from './controller.js';
import type { InitOptions, WidgetEvents, WidgetUser } from './types.js';

type Listener<K extends keyof WidgetEvents> = (payload: WidgetEvents[K]) => void;

/** The global `AnswerDesk` object a host page talks to. */
export interface AnswerDeskApi {
  /** Mounts the widget; resolves when its configuration is loaded and the last conversation is back. */
  initAsync(options: InitOptions): Promise<void>;
  open(): void;
  close(): void;
  toggle(): void;
  /** Switches to a signed-in user (with `hmac` for a verified identity). */
  identify(user: WidgetUser): Promise<void>;
  /** Logout: forgets the user and the conversation this browser remembered. */
  reset(): void;
  on<K extends keyof WidgetEvents>(event: K, listener: Listener<K>): void;
  off<K extends keyof WidgetEvents>(event: K, listener: Listener<K>): void;
  /** Removes the widget from the page. */
  destroy(): void;
  readonly version: string;
}

declare global {
  interface Window {
    AnswerDesk?: AnswerDeskApi;
  }
}

declare const __WIDGET_VERSION__: string;

function validate(options: InitOptions): void {
  if (!options || typeof options !== 'object') throw new TypeError('AnswerDesk.initAsync: options are required');
  if (typeof options.apiUrl !== 'string' || !/^https?:\/\//i.test(options.apiUrl)) throw new TypeError('AnswerDesk.initAsync: apiUrl must be an http(s) URL ending in /api/v1');
  if (typeof options.apiKey !== 'string' || !options.apiKey) throw new TypeError('AnswerDesk.initAsync: apiKey is required (a public key, ad_pk_…)');
  if (/^ad_sk_/.test(options.apiKey)) throw new TypeError('AnswerDesk.initAsync: never put a secret key (ad_sk_…) in a web page; use the public key (ad_pk_…)');
  if (options.user !== undefined && (typeof options.user?.id !== 'string' || !options.user.id)) throw new TypeError('AnswerDesk.initAsync: user.id must be a non-empty string');
}

function createApi(): AnswerDeskApi {
  let controller: WidgetController | null = null;
  let starting: Promise<void> | null = null;
  // Listeners registered before initAsync are kept and attached when the widget starts.
  const early: Array<[keyof WidgetEvents, Listener<never>]> = [];
  const need = (): WidgetController => {
    if (!controller) throw new Error('AnswerDesk: call initAsync first');
    return controller;
  };

  return {
    version: __WIDGET_VERSION__,
    initAsync(options) {
      if (starting) return starting;
      try {
        validate(options);
      } catch (err) {
        return Promise.reject(err);
      }
      const start = async () => {
        if (!document.body) await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }));
        controller = new WidgetController(options);
        for (const [event, listener] of early) controller.events.on(event, listener as Listener<typeof event>);
        await controller.init();
      };
      starting = start().catch((err) => {
        starting = null;
        throw err;
      });
      return starting;
    },
    open: () => need().open(),
    close: () => need().close(),
    toggle: () => need().toggle(),
    identify: (user) => need().identify(user),
    reset: () => need().reset(),
    on(event, listener) {
      if (controller) controller.events.on(event, listener);
      else early.push([event, listener as Listener<never>]);
    },
    off(event, listener) {
      controller?.events.off(event, listener);
      const i = early.findIndex(([e, l]) => e === event && l === listener);
      if (i >= 0) early.splice(i, 1);
    },
    destroy() {
      controller?.destroy();
      controller = null;
      starting = null;
    },
  };
}

// One global per page: loading the script twice keeps the first instance (and its state).
if (!window.AnswerDesk) {
  window.AnswerDesk = createApi();
  window.dispatchEvent(new Event('answerdesk:ready'));
}
