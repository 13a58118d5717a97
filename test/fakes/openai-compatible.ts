import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible model server on a real local port, speaking the Chat Completions wire
 * format (`POST /v1/chat/completions`, streamed as SSE `data:` lines ending in `data: [DONE]`, or one
 * JSON body when `stream` is false). Tests script its turns; the real `@ai-sdk/openai-compatible`
 * provider talks to it over HTTP.
 */

/** One scripted tool call; `arguments` is JSON-encoded unless already a string. */
export interface FakeToolCall {
  name: string;
  arguments: unknown;
  id?: string;
  /** Split the arguments over this many deltas (default 2), as real servers do. */
  pieces?: number;
}

/** One scripted answer of the fake server. */
export interface FakeTurn {
  /** Text chunks streamed in order (a string is split into words). */
  text?: string | string[];
  toolCalls?: FakeToolCall[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: 'stop' | 'tool_calls' | 'length';
  /** Answer with this HTTP status and body instead of a stream. */
  httpError?: { status: number; body?: unknown };
  /** Destroy the socket after this many content chunks (a failure mid-stream). */
  failAfterChunks?: number;
  /** Send a line that is not JSON after this many content chunks (a malformed stream). */
  malformedAfterChunks?: number;
  /** Send headers, then these chunks, then nothing more until the client gives up (or `release`). */
  hangAfterChunks?: number;
  /** Send headers and these chunks, then wait for `resume()` and finish the answer normally. */
  holdAfterChunks?: number;
  /** Never answer at all (not even headers). */
  hangBeforeHeaders?: boolean;
  /** Pause between chunks. */
  delayMs?: number;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeOpenAICompatible {
  /** Base URL to use as OPENAI_COMPATIBLE_BASE_URL (ends in /v1). */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Queues turns; each request takes the next one. */
  enqueue(...turns: FakeTurn[]): void;
  /** Used when the queue is empty (default: a short fixed answer). */
  setFallback(fn: (request: RecordedRequest) => FakeTurn): void;
  /** Ends every hanging response (their sockets are destroyed). */
  release(): void;
  /** Lets every held response (`holdAfterChunks`) finish normally. */
  resume(): void;
  /** Number of responses waiting for `resume()`. */
  heldResponses(): number;
  /** Number of responses still open. */
  openResponses(): number;
  close(): Promise<void>;
}

/** Starts the fake server on 127.0.0.1, port 0. */
export async function startFakeOpenAICompatible(options: { fallback?: (r: RecordedRequest) => FakeTurn } = {}): Promise<FakeOpenAICompatible> {
  const queue: FakeTurn[] = [];
  const requests: RecordedRequest[] = [];
  const open = new Set<ServerResponse>();
  const held = new Set<() => void>();
  let fallback = options.fallback ?? (() => ({ text: 'Hello from the fake model.' }));
  let seq = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      const recorded: RecordedRequest = { path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const turn = queue.shift() ?? fallback(recorded);
      open.add(res);
      res.on('close', () => open.delete(res));
      void respond(res, turn, body?.stream === true, ++seq, held);
    });
  });
  // Many held streams in the benchmark: no idle timeouts.
  server.keepAliveTimeout = 60_000;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...turns) => void queue.push(...turns),
    setFallback: (fn) => void (fallback = fn),
    release() {
      for (const res of open) res.destroy();
    },
    resume() {
      const waiting = [...held];
      held.clear();
      for (const go of waiting) go();
    },
    heldResponses: () => held.size,
    openResponses: () => open.size,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function respond(res: ServerResponse, turn: FakeTurn, stream: boolean, n: number, held: Set<() => void>): Promise<void> {
  if (turn.hangBeforeHeaders) return;
  if (turn.httpError) {
    const body = turn.httpError.body ?? { error: { message: 'upstream failure', type: 'server_error' } };
    res.writeHead(turn.httpError.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    return;
  }
  const id = `chatcmpl-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const texts = typeof turn.text === 'string' ? (turn.text.match(/\S+\s*|\s+/g) ?? []) : (turn.text ?? []);
  const toolCalls = (turn.toolCalls ?? []).map((t, i) => ({
    id: t.id ?? `call_${n}_${i}`,
    name: t.name,
    args: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments),
    pieces: t.pieces ?? 2,
  }));
  const finish = turn.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  const usage = turn.usage ?? { prompt_tokens: 10, completion_tokens: texts.length + toolCalls.length };

  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: 'fake',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: texts.join('') || null,
              ...(toolCalls.length
                ? { tool_calls: toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.args } })) }
                : {}),
            },
            finish_reason: finish,
          },
        ],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'fake', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;

  const events: string[] = [chunk({ role: 'assistant', content: '' })];
  for (const t of texts) events.push(chunk({ content: t }));
  toolCalls.forEach((t, index) => {
    const size = Math.ceil(t.args.length / t.pieces) || 1;
    events.push(chunk({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }));
    for (let at = 0; at < t.args.length; at += size) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: t.args.slice(at, at + size) } }] }));
    }
  });
  const contentCount = events.length - 1;
  events.push(chunk({}, finish));
  events.push(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'fake', choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
  );
  events.push('data: [DONE]\n\n');

  for (let i = 0; i < events.length; i++) {
    if (res.destroyed) return;
    const sent = i; // content chunks sent so far (the first event is the role chunk)
    if (turn.failAfterChunks !== undefined && sent === turn.failAfterChunks + 1 && sent <= contentCount) {
      res.destroy();
      return;
    }
    if (turn.malformedAfterChunks !== undefined && sent === turn.malformedAfterChunks + 1) {
      res.write('data: {"id": this is not json\n\n');
      res.end();
      return;
    }
    if (turn.hangAfterChunks !== undefined && sent === turn.hangAfterChunks + 1) return;
    if (turn.holdAfterChunks !== undefined && sent === turn.holdAfterChunks + 1) {
      await new Promise<void>((resume) => {
        held.add(resume);
        res.once('close', () => held.delete(resume) && resume());
      });
    }
    if (turn.delayMs && i > 0) await sleep(turn.delayMs);
    // Wait until the bytes are handed to the socket, so a failure scripted after them comes after them.
    await new Promise<void>((resolve) => res.write(events[i], () => resolve()));
  }
  res.end();
}
