import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';

/** An answer stream as a client sees it: every chunk, and the message the AI SDK builds from them. */
export interface ParsedAnswer {
  chunks: UIMessageChunk[];
  message: UIMessage | undefined;
  /** The raw SSE text, for what the parser hides on purpose (`:` comments, the `[DONE]` line). */
  raw: string;
}

/**
 * Parses SSE bytes with the AI SDK's own reader (`parseJsonEventStream` + `uiMessageChunkSchema`),
 * failing on any chunk that does not match the schema, then folds them with `readUIMessageStream`.
 */
export async function parseAnswer(raw: string): Promise<ParsedAnswer> {
  const chunks: UIMessageChunk[] = [];
  const parsed = parseJsonEventStream({ stream: new Response(raw).body!, schema: uiMessageChunkSchema });
  const reader = parsed.getReader();
  for (;;) {
    const { value: result, done } = await reader.read();
    if (done) break;
    if (!result.success) throw new Error(`Chunk does not match the UI message stream schema: ${result.error.message}`);
    chunks.push(result.value as UIMessageChunk);
  }
  let message: UIMessage | undefined;
  const replay = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  for await (const m of readUIMessageStream({ stream: replay, terminateOnError: false })) message = m;
  return { chunks, message, raw };
}

/** The chunk types in order, text deltas and tool-input deltas collapsed to one entry per run. */
export function chunkTypes(chunks: UIMessageChunk[]): string[] {
  const out: string[] = [];
  for (const c of chunks) {
    if ((c.type === 'text-delta' || c.type === 'tool-input-delta') && out[out.length - 1] === c.type) continue;
    out.push(c.type);
  }
  return out;
}

/** Concatenated text of the text deltas. */
export function streamedText(chunks: UIMessageChunk[]): string {
  return chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : [])).join('');
}
