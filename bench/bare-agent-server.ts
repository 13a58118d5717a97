/**
 * Child process of the agent benchmark: the baseline the real server is measured against. What any
 * AI SDK app does, and nothing more: a plain node:http server that, per POST, calls `streamText` with
 * `@ai-sdk/openai-compatible` against the same fake upstream (OPENAI_COMPATIBLE_BASE_URL) and pipes
 * its UI message stream to the client. No auth, no database, no tools, no persistence. Prints
 * `{port}` once listening; answers the bench's `usage` messages (CPU time, heap).
 */
import { createServer } from 'node:http';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, type ModelMessage } from 'ai';
import { announceReady, answerUsageRequests } from './lib.js';

// Made once, as an app does at module level (and as the real server's model registry does).
const model = createOpenAICompatible({
  name: 'openai-compatible',
  baseURL: process.env.OPENAI_COMPATIBLE_BASE_URL!,
  includeUsage: true,
})('bench');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let messages: ModelMessage[];
    try {
      messages = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: ModelMessage[] }).messages;
    } catch {
      res.writeHead(400).end();
      return;
    }
    // An upstream cut mid-answer ends the stream with an error chunk; the default onError only logs it.
    const result = streamText({ model, system: 'You are a helpful assistant.', messages, onError: () => {} });
    result.pipeUIMessageStreamToResponse(res);
  });
});
// When the bench cuts the held upstream streams, AI SDK 6 rejects a promise no caller awaits; a web
// framework would log it and go on, so does this server.
process.on('unhandledRejection', () => {});

server.requestTimeout = 0;
server.headersTimeout = 0;
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  answerUsageRequests();
  announceReady({ port: (server.address() as { port: number }).port });
});
