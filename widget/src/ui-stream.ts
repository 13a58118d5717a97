import { createParser } from 'eventsource-parser';

/**
 * The chunks of the AI SDK UI message stream (protocol v1) that the widget acts on. Other chunk
 * kinds (reasoning, step boundaries, data parts) arrive too and are ignored.
 */
export type UIChunk =
  | { type: 'start'; messageId?: string; messageMetadata?: { conversationId?: string } & Record<string, unknown> }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input?: unknown }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; errorText?: string }
  | { type: 'tool-output-available'; toolCallId: string; output?: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText?: string }
  | { type: 'source-url'; sourceId: string; url: string; title?: string }
  | { type: 'source-document'; sourceId: string; title: string; filename?: string; mediaType?: string }
  | { type: 'error'; errorText: string }
  | { type: 'abort' }
  | { type: 'finish'; messageMetadata?: unknown }
  | { type: 'data-handoff'; data: unknown }
  | { type: 'other'; original: string };

/** The stream broke its own protocol (not JSON, or no object): the answer cannot be trusted to be whole. */
export class StreamProtocolError extends Error {}

const KNOWN = new Set([
  'start', 'text-start', 'text-delta', 'text-end', 'tool-input-start', 'tool-input-available', 'tool-input-error',
  'tool-output-available', 'tool-output-error', 'source-url', 'source-document', 'error', 'abort', 'finish', 'data-handoff',
]);

/**
 * Reads a UI message stream response body: bytes → text → server-sent events (eventsource-parser,
 * which handles events split across network reads, CRLF, comments and multi-line data) → JSON
 * chunks, in order. Resolves when the server ends the stream (`[DONE]` or close); rejects when the
 * read fails, e.g. because `signal` aborted it.
 */
export async function readUIMessageStream(body: ReadableStream<Uint8Array>, onChunk: (chunk: UIChunk) => void): Promise<{ done: boolean }> {
  let sawDone = false;
  let failure: Error | null = null;
  const parser = createParser({
    onEvent(event) {
      if (failure) return;
      if (event.data === '[DONE]') {
        sawDone = true;
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        failure = new StreamProtocolError('The answer stream sent something that is not JSON.');
        return;
      }
      if (!value || typeof value !== 'object' || typeof (value as { type?: unknown }).type !== 'string') {
        failure = new StreamProtocolError('The answer stream sent a chunk without a type.');
        return;
      }
      const chunk = value as { type: string };
      onChunk(KNOWN.has(chunk.type) ? (chunk as UIChunk) : { type: 'other', original: chunk.type });
    },
  });
  // Node's and the DOM's stream typings disagree on TextDecoderStream; in the browser this is the standard pair.
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
      if (failure) throw failure;
    }
  } finally {
    reader.releaseLock();
  }
  return { done: sawDone };
}
