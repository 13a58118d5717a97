import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeUIMessageStreamToResponse, type UIMessageChunk } from 'ai';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { sendAnswerStream } from './stream.js';

const CHUNKS: UIMessageChunk[] = [
  { type: 'start', messageId: 'msg_1', messageMetadata: { conversationId: 'conv_1' } },
  { type: 'start-step' },
  { type: 'text-start', id: 't1' },
  ...['Grüße ', 'aus ', '"Zürich"\n', '😀 ', '\\ done'].map((delta): UIMessageChunk => ({ type: 'text-delta', id: 't1', delta })),
  { type: 'text-end', id: 't1' },
  { type: 'source-url', sourceId: 'ks_1', url: 'https://help.example.com/a', title: 'A' },
  { type: 'finish-step' },
  { type: 'finish', finishReason: 'stop' },
];

/** A stream of `chunks`, the last one after `pauseMs` (so keep-alive comments have time to go out). */
function answer(chunks: UIMessageChunk[], pauseMs = 0): ReadableStream<UIMessageChunk> {
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (i === chunks.length - 1 && pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
  });
}

/** Response status, headers and body bytes of a GET to `port`. */
function get(port: number): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
    })
      .on('error', reject)
      .end();
  });
}

const withoutDate = (headers: Record<string, unknown>) => {
  const { date: _date, ...rest } = headers;
  return rest;
};

describe('sendAnswerStream', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  async function sdkServer(keepAliveMs: number, pauseMs: number): Promise<number> {
    const server: Server = createServer((_req, res) => void pipeUIMessageStreamToResponse({ response: res, stream: answer(CHUNKS, pauseMs), keepAliveMs }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(r)));
    return (server.address() as AddressInfo).port;
  }

  async function ourServer(keepAliveMs: number, pauseMs: number): Promise<number> {
    const app = Fastify();
    app.get('/', (_request, reply) => sendAnswerStream(reply, Promise.resolve(answer(CHUNKS, pauseMs)), { keepAliveMs }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    return (app.server.address() as AddressInfo).port;
  }

  it('writes the same status, headers and bytes as the AI SDK writer', async () => {
    const [ours, sdk] = await Promise.all([get(await ourServer(60_000, 0)), get(await sdkServer(60_000, 0))]);
    expect(ours.status).toBe(200);
    expect(withoutDate(ours.headers)).toEqual(withoutDate(sdk.headers));
    expect(ours.body.toString('utf8')).toBe(sdk.body.toString('utf8'));
    expect(ours.body.equals(sdk.body)).toBe(true);
  });

  it('sends keep-alive comments while the answer is silent, as the AI SDK writer does', async () => {
    const [ours, sdk] = await Promise.all([get(await ourServer(20, 150)), get(await sdkServer(20, 150))]);
    const strip = (body: Buffer) => body.toString('utf8').replaceAll(': keep-alive\n\n', '');
    expect(ours.body.toString('utf8')).toContain(': keep-alive\n\n');
    expect(strip(ours.body)).toBe(strip(sdk.body));
  });
});
