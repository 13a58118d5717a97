import { pipeUIMessageStreamToResponse, type UIMessageChunk } from 'ai';
import type { FastifyReply } from 'fastify';
import { replyHeaders } from '../../http/auth.js';

export interface SendStreamOptions {
  /** A `:` comment after this much silence, so proxies keep the connection open. */
  keepAliveMs: number;
  /**
   * Chunks that may wait for a client that stopped reading. Past this the client is dropped (as if it
   * had left) and the answer is finished and stored without it, so a stalled reader cannot make the
   * server hold more than this.
   */
  maxQueuedChunks?: number;
  /** Sees every chunk of the answer, whether or not the client still reads (metrics). */
  observe?: (chunk: UIMessageChunk) => void;
}

const DEFAULT_MAX_QUEUED_CHUNKS = 2000;

/**
 * Sends an answer's UI message stream on a hijacked Fastify reply with the AI SDK's own SSE writer.
 * The answer is read to its end whatever the client does: the client gets a bounded branch of it,
 * written only as fast as its socket drains. The answer may still be setting up (a promise of its
 * stream). Resolves once the whole answer has been read (and so
 * stored).
 */
export async function sendAnswerStream(
  reply: FastifyReply,
  answer: ReadableStream<UIMessageChunk> | Promise<ReadableStream<UIMessageChunk>>,
  options: SendStreamOptions,
): Promise<void> {
  const limit = options.maxQueuedChunks ?? DEFAULT_MAX_QUEUED_CHUNKS;
  // Onsend hooks do not run after a hijack: rate-limit, request-id and CORS headers go in by hand.
  const headers = replyHeaders(reply);
  reply.hijack();
  const response = reply.raw;

  let clientGone = false;
  let client!: ReadableStreamDefaultController<UIMessageChunk>;
  const toClient = new ReadableStream<UIMessageChunk>(
    {
      start(controller) {
        client = controller;
      },
      cancel() {
        clientGone = true;
      },
    },
    { highWaterMark: 16 },
  );

  void pipeUIMessageStreamToResponse({ response, headers, stream: toClient, keepAliveMs: options.keepAliveMs }).catch(() => {
    clientGone = true;
  });

  try {
    // The response (headers, `: stream-open`) starts while the answer is still being set up.
    const reader = (await answer).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      options.observe?.(value);
      if (clientGone) continue;
      if ((client.desiredSize ?? 0) < -limit) {
        clientGone = true;
        response.destroy();
        continue;
      }
      client.enqueue(value);
    }
    if (!clientGone) client.close();
  } catch (err) {
    if (!clientGone) client.error(err);
    throw err;
  }
}
