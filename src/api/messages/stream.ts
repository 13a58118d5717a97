import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from 'ai';
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
/** The AI SDK's own SSE comments (pipeUIMessageStreamToResponse with `keepAliveMs`). */
const STREAM_OPEN_COMMENT = ': stream-open\n\n';
const KEEP_ALIVE_COMMENT = ': keep-alive\n\n';
const DONE = 'data: [DONE]\n\n';

/**
 * Sends an answer's UI message stream on a hijacked Fastify reply, in the bytes of the AI SDK's
 * pipeUIMessageStreamToResponse (its headers, `: stream-open`, one `data: <json>` event per chunk,
 * `: keep-alive` comments after `keepAliveMs` of silence, `data: [DONE]`). The answer is read to its
 * end whatever the client does, and each chunk is written to the socket in the loop that reads it:
 * the SDK's writer would add four web stream stages per chunk (a queue, JSON to SSE, keep-alive,
 * text encoding), about a third of the server's CPU time per streamed answer. A client that stops
 * reading is dropped once `maxQueuedChunks` chunks wait for it. The answer may still be setting up
 * (a promise of its stream): the headers and `: stream-open` go out at once. Resolves once the whole
 * answer has been read (and so stored).
 */
export async function sendAnswerStream(
  reply: FastifyReply,
  answer: ReadableStream<UIMessageChunk> | Promise<ReadableStream<UIMessageChunk>>,
  options: SendStreamOptions,
): Promise<void> {
  const limit = options.maxQueuedChunks ?? DEFAULT_MAX_QUEUED_CHUNKS;
  const keepAliveMs = options.keepAliveMs;
  // Onsend hooks do not run after a hijack: rate-limit, request-id and CORS headers go in by hand.
  const headers = { ...UI_MESSAGE_STREAM_HEADERS, ...replyHeaders(reply) };
  reply.hijack();
  const response = reply.raw;

  let clientGone = false;
  /** Chunks written since the socket last asked us to wait (0 while it drains as fast as we write). */
  let queued = 0;
  let lastWrite = performance.now();
  let keepAlive: NodeJS.Timeout | undefined;
  const stopKeepAlive = () => {
    clearTimeout(keepAlive);
    keepAlive = undefined;
  };
  const leave = () => {
    clientGone = true;
    stopKeepAlive();
  };
  const onDrain = () => void (queued = 0);
  response.once('close', leave);
  response.on('drain', onDrain);
  const write = (text: string) => {
    lastWrite = performance.now();
    if (!response.write(text) || queued > 0) queued++;
  };
  const scheduleKeepAlive = (delay: number) => {
    keepAlive = setTimeout(() => {
      const silent = performance.now() - lastWrite;
      if (silent < keepAliveMs) return scheduleKeepAlive(keepAliveMs - silent);
      // Like the SDK, no comment for a client that has not read what it was sent.
      if (queued === 0) write(KEEP_ALIVE_COMMENT);
      else lastWrite = performance.now();
      scheduleKeepAlive(keepAliveMs);
    }, delay);
  };

  response.writeHead(200, headers);
  if (response.destroyed) leave();
  else if (keepAliveMs > 0) {
    write(STREAM_OPEN_COMMENT);
    scheduleKeepAlive(keepAliveMs);
  }

  try {
    // The response (headers, `: stream-open`) starts while the answer is still being set up.
    const reader = (await answer).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      options.observe?.(value);
      if (clientGone) continue;
      if (queued > limit) {
        leave();
        response.destroy();
        continue;
      }
      write(`data: ${JSON.stringify(value)}\n\n`);
    }
    if (!clientGone) {
      stopKeepAlive();
      response.end(DONE);
    }
  } catch (err) {
    // As the SDK's writer does when its stream fails: the response ends, without `[DONE]`.
    if (!clientGone) {
      stopKeepAlive();
      response.end();
    }
    throw err;
  } finally {
    response.off('close', leave);
    response.off('drain', onDrain);
  }
}
