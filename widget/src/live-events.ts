import { createParser } from 'eventsource-parser';
import type { ApiClient } from './client.js';
import type { Handoff, HistoryMessage } from './types.js';

export interface LiveHandlers {
  message(message: HistoryMessage): void;
  handoff(handoff: Handoff): void;
  /** The conversation was closed (by the team, or by idling too long); nothing more will come. */
  closed(): void;
}

/** Waits between reconnects, growing to this; a server restart or a network change heals by itself. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows a conversation's live events (GET /chat/conversations/{id}/events) with fetch, so the key
 * and identity headers go along (EventSource cannot send headers). Reconnects with `Last-Event-ID`
 * after a drop, so nothing stored meanwhile is missed; the first connection asks from the start
 * (`0`) and the caller drops what it already shows. Stops for good with `stop()`.
 */
export function followConversation(client: ApiClient, conversationId: string, handlers: LiveHandlers): { stop(): void } {
  const controller = new AbortController();
  let lastId = '0';
  let backoff = 1000;

  const connect = async () => {
    while (!controller.signal.aborted) {
      try {
        const response = await client.request('GET', `/chat/conversations/${encodeURIComponent(conversationId)}/events`, undefined, controller.signal, {
          'last-event-id': lastId,
        });
        const parser = createParser({
          onEvent(event) {
            let data: { message?: HistoryMessage; handoff?: Handoff };
            try {
              data = JSON.parse(event.data);
            } catch {
              return;
            }
            if (event.id) lastId = event.id;
            backoff = 1000;
            if (event.event === 'message' && data.message) handlers.message(data.message);
            else if (event.event === 'handoff') handlers.handoff(data.handoff ?? null);
            else if (event.event === 'closed') {
              controller.abort();
              handlers.closed();
            }
          },
        });
        const reader = response.body!.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch (err) {
        // A 4xx will not heal by retrying (the conversation is gone, or the key was refused).
        const status = (err as { status?: number }).status;
        if (controller.signal.aborted || (status !== undefined && status < 500 && status !== 429)) return;
      }
      await new Promise((resolve) => setTimeout(resolve, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  };
  void connect();
  return { stop: () => controller.abort() };
}
