import type { WidgetEvents } from './types.js';

type Listener<K extends keyof WidgetEvents> = (payload: WidgetEvents[K]) => void;

/** The host page's event subscriptions; a throwing listener never breaks the widget or other listeners. */
export class Emitter {
  private listeners = new Map<keyof WidgetEvents, Set<Listener<never>>>();

  on<K extends keyof WidgetEvents>(event: K, listener: Listener<K>): void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
  }

  off<K extends keyof WidgetEvents>(event: K, listener: Listener<K>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  emit<K extends keyof WidgetEvents>(event: K, payload: WidgetEvents[K]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<K>)(payload);
      } catch (err) {
        console.error('[AnswerDesk] event listener failed', err);
      }
    }
  }
}
