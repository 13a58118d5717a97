/**
 * Agent benchmark: what the server adds to a model's stream, and what a held stream costs.
 *
 * - A fake OpenAI-compatible upstream answers at once with 200 tokens. Time to first token and to
 *   last byte are measured calling the upstream directly and through POST /chat/messages (the real
 *   provider, tool factories, persistence, SSE), at 1 and 50 concurrent streams; the difference is
 *   what the server adds.
 * - Then 2,000 answers are held open by an upstream that sends a few tokens and goes quiet; the
 *   server's resident memory (it runs in a child process) is sampled before and while they are held.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { createBuiltinModel } from '../src/agent/builtin/model.js';
import { startFakeOpenAICompatible, type FakeTurn } from '../test/fakes/openai-compatible.js';
import { startChild } from './lib.js';

const TOKENS = Array.from({ length: 200 }, (_, i) => `tok${i} `);
const HELD = 2000;

interface Timing {
  firstToken: number;
  lastByte: number;
}

/** Sends one request and times its first content token and its end. */
async function timed(url: string, init: { headers: Record<string, string>; body: string }, tokenMarker: string): Promise<Timing> {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...init.headers }, body: init.body });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let firstToken = 0;
  let seen = '';
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!firstToken) {
      seen += decoder.decode(value, { stream: true });
      if (seen.includes(tokenMarker)) firstToken = performance.now() - start;
    }
  }
  return { firstToken, lastByte: performance.now() - start };
}

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  while (!(await reader.read()).done);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function runConcurrent(total: number, concurrency: number, one: (i: number) => Promise<Timing>): Promise<Timing[]> {
  const out: Timing[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) out.push(await one(next++));
    }),
  );
  return out;
}

/** Resident and peak resident memory of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** The builtin model's own time per answer step (decide and stream), without the server around it. */
async function builtinOwnTime(): Promise<void> {
  const model = createBuiltinModel();
  const hits = Array.from({ length: 8 }, (_, i) => ({
    chunkId: `chunk_${i}`,
    sourceId: `ks_${i % 3}`,
    title: `Article ${i}`,
    url: `https://help.example.com/${i}`,
    headingPath: ['Help', `Section ${i}`],
    text: 'To reset your password, open Settings, choose Security and click Reset password. '.repeat(10),
    score: 8 - i,
  }));
  const tool = { type: 'function' as const, name: 'search_knowledge', description: 'Search', inputSchema: { type: 'object' as const } };
  const prompts: LanguageModelV3Prompt[] = [
    [{ role: 'user', content: [{ type: 'text', text: 'Hello!' }] }],
    [
      { role: 'user', content: [{ type: 'text', text: 'How do I reset my password?' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search_knowledge', input: { query: 'reset password' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'search_knowledge', output: { type: 'json', value: { results: hits } } }] },
    ],
  ];
  for (const [label, prompt] of [['greeting', prompts[0]], ['answer from 8 passages', prompts[1]]] as const) {
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const start = performance.now();
      const { stream } = await model.doStream({ prompt, tools: [tool] });
      const reader = stream.getReader();
      while (!(await reader.read()).done);
      times.push(performance.now() - start);
    }
    const steady = times.slice(500);
    console.log(`builtin model, ${label}: p50 ${percentile(steady, 50).toFixed(3)} ms, p99 ${percentile(steady, 99).toFixed(3)} ms of its own per step (goal < 50 ms)`);
  }
}

export async function run(): Promise<void> {
  await builtinOwnTime();
  const fake = await startFakeOpenAICompatible();
  let turn: FakeTurn = { text: TOKENS };
  fake.setFallback(() => turn);
  const { info, child } = await startChild<{ port: number; publicKey: string }>('bench/agent-server.ts', {
    OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
    ANSWERDESK_MODEL_TIMEOUT_MS: '600000',
    ANSWERDESK_MODEL_IDLE_TIMEOUT_MS: '600000',
  });
  const base = `http://127.0.0.1:${info.port}/api/v1`;
  const headers = { 'x-api-key': info.publicKey };

  const conversations = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    await runConcurrent(n, 20, async () => {
      const res = await fetch(`${base}/chat/conversations`, { method: 'POST', headers });
      ids.push(((await res.json()) as { conversationId: string }).conversationId);
      return { firstToken: 0, lastByte: 0 };
    });
    return ids;
  };

  const direct = () =>
    timed(`${fake.baseUrl}/chat/completions`, { headers: {}, body: JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'hi' }] }) }, 'tok0');
  const viaServer = (conversationId: string) =>
    timed(`${base}/chat/messages`, { headers, body: JSON.stringify({ conversationId, messages: [{ role: 'user', content: 'Tell me something.' }] }) }, 'tok0');

  try {
    // Warm both paths (JIT, connection pools, prepared statements).
    const warm = await conversations(50);
    await runConcurrent(50, 10, (i) => viaServer(warm[i]));
    await runConcurrent(50, 10, () => direct());

    const rows: Array<Record<string, string | number>> = [];
    for (const [concurrency, total] of [
      [1, 200],
      [50, 1000],
    ] as const) {
      const ids = await conversations(total);
      const up = await runConcurrent(total, concurrency, () => direct());
      const ours = await runConcurrent(total, concurrency, (i) => viaServer(ids[i]));
      for (const [label, pick] of [
        ['first token', (t: Timing) => t.firstToken],
        ['last byte', (t: Timing) => t.lastByte],
      ] as const) {
        const u50 = percentile(up.map(pick), 50);
        const o50 = percentile(ours.map(pick), 50);
        const u99 = percentile(up.map(pick), 99);
        const o99 = percentile(ours.map(pick), 99);
        rows.push({
          streams: concurrency,
          measure: label,
          'upstream p50 ms': u50.toFixed(1),
          'server p50 ms': o50.toFixed(1),
          'added p50 ms': (o50 - u50).toFixed(1),
          'added p99 ms': (o99 - u99).toFixed(1),
        });
      }
    }
    console.log('200-token answers, upstream direct vs through POST /chat/messages:');
    console.table(rows);

    // Held streams: the upstream sends 3 tokens, then nothing until released.
    const ids = await conversations(HELD);
    const before = memoryOf(child.pid!);
    turn = { text: TOKENS, hangAfterChunks: 3 };
    // Opened in batches (a burst of 2,000 connects would overflow the listen backlog), each batch
    // once the previous one streams.
    const held: Array<Promise<void>> = [];
    const open = async (conversationId: string): Promise<ReadableStreamDefaultReader<Uint8Array>> => {
      const res = await fetch(`${base}/chat/messages`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ conversationId, messages: [{ role: 'user', content: 'Hold on.' }] }),
      });
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('tok0')) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended early');
        seen += new TextDecoder().decode(value);
      }
      return reader;
    };
    for (let i = 0; i < ids.length; i += 100) {
      const readers = await Promise.all(ids.slice(i, i + 100).map(open));
      // Keep reading (comments, the final error) until the server ends each stream.
      for (const reader of readers) held.push((async () => void (await drain(reader)))());
    }
    await new Promise((r) => setTimeout(r, 1000));
    const during = memoryOf(child.pid!);
    fake.release();
    await Promise.allSettled(held);
    const perStream = ((during.rss - before.rss) * 1024) / HELD;
    console.log(
      `${HELD} streams held open: server RSS ${before.rss.toFixed(0)} MiB before, ${during.rss.toFixed(0)} MiB while held ` +
        `(peak ${during.peak.toFixed(0)} MiB); ${perStream.toFixed(1)} KB per held stream (goal ≤ 40 KB)`,
    );
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
    await fake.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
