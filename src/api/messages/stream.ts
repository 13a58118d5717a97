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

// The comments the AI SDK's writer sends when given `keepAliveMs` (its own constants are not exported).
const STREAM_OPEN_COMMENT = ': stream-open\n\n';
const KEEP_ALIVE_COMMENT = ': keep-alive\n\n';

/**
 * Sends an answer's UI message stream on a hijacked Fastify reply with the AI SDK's own SSE writer.
 * The answer is read to its end whatever the client does: the client gets a bounded branch of it,
 * written only as fast as its socket drains. The answer may still be setting up (a promise of its
 * stream). Resolves once the whole answer has been read (and so
 * stored).
 *
 * The `: stream-open` and keep-alive comments are written here, between the SDK writer's events,
 * rather than by giving the SDK `keepAliveMs`: that adds a whole stream stage after its SSE
 * transform (a read, an enqueue and a timer reset per chunk, and its state held for the life of the
 * answer) for a comment sent once per 15 s of silence. The loop below already sees every chunk, so
 * one timer per answer does it. Each SDK write is a whole event, so a comment never splits one.
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

  void pipeUIMessageStreamToResponse({ response, headers, stream: toClient }).catch(() => {
    clientGone = true;
  });
  // The SDK has written the head; the comment goes before any event, as its keep-alive stream sends it.
  response.write(STREAM_OPEN_COMMENT);
  // A comment after every keepAliveMs without a chunk, unless the client is behind (its socket full).
  const keepAliveMs = options.keepAliveMs;
  let lastChunkAt = performance.now();
  let keepAlive: NodeJS.Timeout | undefined;
  const onSilence = (): void => {
    const silent = performance.now() - lastChunkAt;
    if (silent < keepAliveMs - 1) {
      keepAlive = setTimeout(onSilence, keepAliveMs - silent);
      return;
    }
    if (!clientGone && !response.writableNeedDrain && !response.destroyed) response.write(KEEP_ALIVE_COMMENT);
    lastChunkAt = performance.now();
    keepAlive = setTimeout(onSilence, keepAliveMs);
  };
  keepAlive = setTimeout(onSilence, keepAliveMs);

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
      lastChunkAt = performance.now();
      client.enqueue(value);
    }
    if (!clientGone) client.close();
  } catch (err) {
    if (!clientGone) client.error(err);
    throw err;
  } finally {
    clearTimeout(keepAlive);
  }
}
