import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';

/** A live SSE connection as a test reads it: every event so far, and a way to wait for more. */
export interface SseConnection {
  status: number;
  events: EventSourceMessage[];
  /** Resolves with the first event (from the start of the connection) that `match` accepts. */
  next(match: (e: EventSourceMessage) => boolean, timeoutMs?: number): Promise<EventSourceMessage>;
  /** The raw text received, for `:` comments (keep-alives) that the parser drops. */
  raw(): string;
  /** Resolves when the server ends the stream (not when the test closes it). */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens an SSE stream over a real socket with fetch and parses it with `eventsource-parser` (the
 * parser the AI SDK uses), the way the widget reads it.
 */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: EventSourceMessage[] = [];
  let rawText = '';
  const waiters = new Set<() => void>();
  let serverEnded!: () => void;
  const ended = new Promise<void>((resolve) => (serverEnded = resolve));
  if (response.ok && response.body) {
    const [forParser, forRaw] = response.body.tee();
    void (async () => {
      try {
        const reader = forRaw.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          rawText += value;
        }
        serverEnded();
      } catch {
        // Closed by the test.
      }
    })();
    void (async () => {
      try {
        const reader = forParser.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          events.push(value);
          for (const w of [...waiters]) w();
        }
      } catch {
        // Closed by the test.
      }
    })();
  }
  return {
    status: response.status,
    events,
    raw: () => rawText,
    ended,
    next(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = events.find(match);
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event; got ${JSON.stringify(events.map((e) => e.event))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => controller.abort(),
  };
}
