import type { ChatMessage, Handoff } from './types.js';
import { readUIMessageStream, type UIChunk } from './ui-stream.js';

/** Where a streamed answer goes: the message being built and the screen-reader announcer. */
export interface AnswerSink {
  current(): ChatMessage;
  patch(patch: Partial<ChatMessage>): void;
  announce(text: string): void;
}

export interface AnswerOutcome {
  /** The stream reached its `finish` chunk. */
  finished: boolean;
  /** The `error` chunk's text, meant for the visitor. */
  error: string | null;
  /** The conversation's handoff, when the stream said (a `data-handoff` part, or the agent's request_handoff tool). */
  handoff?: Handoff;
}

/**
 * Applies a UI message stream to an assistant message as its chunks arrive: text (several text
 * parts of a multi-step answer become paragraphs), tool progress, sources, the message id. The live
 * region hears whole sentences, not every delta.
 */
export async function applyAnswerStream(body: ReadableStream<Uint8Array>, sink: AnswerSink, signal: AbortSignal): Promise<AnswerOutcome> {
  const texts = new Map<string, string>();
  let unannounced = '';
  const outcome: AnswerOutcome = { finished: false, error: null };

  const tool = (id: string, name: string | undefined, state: 'running' | 'done' | 'error') => {
    const tools = sink.current().tools;
    const known = tools.some((t) => t.id === id);
    sink.patch({
      tools: known ? tools.map((t) => (t.id === id ? { ...t, state, name: name ?? t.name } : t)) : [...tools, { id, name: name ?? 'action', state }],
    });
  };

  const onChunk = (chunk: UIChunk) => {
    if (signal.aborted) return;
    switch (chunk.type) {
      case 'start':
        if (chunk.messageId) sink.patch({ id: chunk.messageId });
        break;
      case 'text-start':
        texts.set(chunk.id, texts.get(chunk.id) ?? '');
        break;
      case 'text-delta': {
        texts.set(chunk.id, (texts.get(chunk.id) ?? '') + chunk.delta);
        sink.patch({ text: Array.from(texts.values()).filter(Boolean).join('\n\n') });
        unannounced += chunk.delta;
        const cut = Math.max(unannounced.lastIndexOf('. '), unannounced.lastIndexOf('? '), unannounced.lastIndexOf('! '), unannounced.lastIndexOf('\n'));
        if (cut >= 0) {
          sink.announce(unannounced.slice(0, cut + 1));
          unannounced = unannounced.slice(cut + 1);
        }
        break;
      }
      case 'tool-input-start':
      case 'tool-input-available':
        tool(chunk.toolCallId, chunk.toolName, 'running');
        break;
      case 'tool-output-available': {
        tool(chunk.toolCallId, undefined, 'done');
        const out = chunk.output as { handoff?: Handoff } | undefined;
        if (out && typeof out === 'object' && 'handoff' in out) outcome.handoff = out.handoff ?? null;
        break;
      }
      case 'data-handoff':
        outcome.handoff = (chunk.data as Handoff) ?? null;
        break;
      case 'tool-input-error':
      case 'tool-output-error':
        tool(chunk.toolCallId, 'toolName' in chunk ? chunk.toolName : undefined, 'error');
        break;
      case 'source-url':
      case 'source-document': {
        const sources = sink.current().sources;
        if (sources.some((s) => s.id === chunk.sourceId)) break;
        const source =
          chunk.type === 'source-url'
            ? { id: chunk.sourceId, url: chunk.url, title: chunk.title || chunk.url }
            : { id: chunk.sourceId, title: chunk.title || chunk.filename || 'Document' };
        sink.patch({ sources: [...sources, source] });
        break;
      }
      case 'error':
        outcome.error = chunk.errorText || 'Something went wrong while answering.';
        break;
      case 'finish':
        outcome.finished = true;
        break;
      default:
        break;
    }
  };

  try {
    await readUIMessageStream(body, onChunk);
  } finally {
    sink.announce(unannounced);
  }
  return outcome;
}
