/**
 * Agent benchmark: what the server adds to a model's stream, and what a held stream costs.
 *
 * - A fake OpenAI-compatible upstream answers at once with 200 tokens (BENCH_TOKENS changes it: with
 *   1, the CPU figures are what each server spends per answer besides the tokens). Time to first
 *   token and to last byte are measured calling the upstream directly, through a bare AI SDK
 *   server (streamText piped as a UI message stream, nothing else: bench/bare-agent-server.ts) and
 *   through POST /chat/messages (the real provider, tool factories, persistence, SSE), at 1 and 50
 *   concurrent streams, with each server's own CPU time per answer (process.cpuUsage() of its
 *   child process).
 * - Then 2,000 answers are held open by an upstream that sends a few tokens and goes quiet, on each
 *   server in turn; heap (after a full GC) and resident memory per held answer are compared. With
 *   BENCH_HISTORY=<n>, each held answer's conversation first has n earlier questions and 200-token
 *   answers (stored through the server; sent in the request to the bare server, as an AI SDK app
 *   sends its history), so what a held answer keeps of its conversation shows.
 */
import { readFileSync } from 'node:fs';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { createBuiltinModel } from '../src/agent/builtin/model.js';
import { startFakeOpenAICompatible, type FakeTurn } from '../test/fakes/openai-compatible.js';
import { startChild, stopChild, usageOf } from './lib.js';

const TOKENS = Array.from({ length: 200 }, (_, i) => `tok${i} `);
/** Tokens of each measured answer (BENCH_TOKENS); held answers and earlier turns keep 200. */
const ANSWER_TOKENS = Array.from({ length: Math.max(1, Number(process.env.BENCH_TOKENS ?? 200)) }, (_, i) => `tok${i} `);
const HELD = 2000;
/** Earlier turns in each held answer's conversation (BENCH_HISTORY, default none). */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 0);
/** Turns each server takes at a concurrency level. */
const ROUNDS = 5;

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
  let turn: FakeTurn = { text: ANSWER_TOKENS };
  fake.setFallback(() => turn);
  const childOptions = { nodeArgs: ['--expose-gc'], ipc: true };
  const { info, child } = await startChild<{ port: number; publicKey: string }>(
    'bench/agent-server.ts',
    { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, ANSWERDESK_MODEL_TIMEOUT_MS: '600000', ANSWERDESK_MODEL_IDLE_TIMEOUT_MS: '600000' },
    childOptions,
  );
  const bare = await startChild<{ port: number }>('bench/bare-agent-server.ts', { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl }, childOptions);
  const base = `http://127.0.0.1:${info.port}/api/v1`;
  const bareUrl = `http://127.0.0.1:${bare.info.port}/api/chat`;
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
  const viaBare = () => timed(bareUrl, { headers: {}, body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell me something.' }] }) }, 'tok0');
  /** Runs `total` answers through one server and returns their timings and the server's CPU time per answer. */
  const measured = async (server: typeof child, total: number, concurrency: number, one: (i: number) => Promise<Timing>) => {
    const before = await usageOf(server);
    const timings = await runConcurrent(total, concurrency, one);
    const after = await usageOf(server);
    return { timings, cpuMs: (after.cpuMicros - before.cpuMicros) / 1000 / total };
  };

  try {
    // Warm every path (JIT, connection pools, prepared statements).
    const warm = await conversations(50);
    await runConcurrent(50, 10, (i) => viaServer(warm[i]));
    await runConcurrent(50, 10, () => viaBare());
    await runConcurrent(50, 10, () => direct());

    const rows: Array<Record<string, string | number>> = [];
    const cpuRows: Array<Record<string, string | number>> = [];
    for (const [concurrency, total] of [
      [1, 200],
      [50, 500],
    ] as const) {
      const ids = await conversations(total);
      const up = await runConcurrent(total, concurrency, () => direct());
      // The two servers take turns in rounds, so a change in the machine's load falls on both.
      const baseline = { timings: [] as Timing[], cpuMs: 0 };
      const ours = { timings: [] as Timing[], cpuMs: 0 };
      const round = total / ROUNDS;
      for (let r = 0; r < ROUNDS; r++) {
        const b = await measured(bare.child, round, concurrency, () => viaBare());
        const o = await measured(child, round, concurrency, (i) => viaServer(ids[r * round + i]));
        baseline.timings.push(...b.timings);
        baseline.cpuMs += b.cpuMs / ROUNDS;
        ours.timings.push(...o.timings);
        ours.cpuMs += o.cpuMs / ROUNDS;
      }
      for (const [label, pick] of [
        ['first token', (t: Timing) => t.firstToken],
        ['last byte', (t: Timing) => t.lastByte],
      ] as const) {
        const u50 = percentile(up.map(pick), 50);
        const b50 = percentile(baseline.timings.map(pick), 50);
        const o50 = percentile(ours.timings.map(pick), 50);
        rows.push({
          streams: concurrency,
          measure: label,
          'upstream p50 ms': u50.toFixed(1),
          'bare AI SDK p50 ms': b50.toFixed(1),
          'server p50 ms': o50.toFixed(1),
          'bare added p50 ms': (b50 - u50).toFixed(1),
          'server added p50 ms': (o50 - u50).toFixed(1),
          'server p99 ms': percentile(ours.timings.map(pick), 99).toFixed(1),
          'server / bare p50': (o50 / b50).toFixed(2),
        });
      }
      cpuRows.push({
        streams: concurrency,
        'bare AI SDK CPU ms/answer': baseline.cpuMs.toFixed(2),
        'server CPU ms/answer': ours.cpuMs.toFixed(2),
        'server / bare': (ours.cpuMs / baseline.cpuMs).toFixed(2),
      });
    }
    console.log(`${ANSWER_TOKENS.length}-token answers: upstream direct, a bare AI SDK streamText server, and POST /chat/messages:`);
    console.table(rows);
    console.log(`Server CPU time per ${ANSWER_TOKENS.length}-token answer (the child process's own process.cpuUsage()):`);
    console.table(cpuRows);

    // Held streams: the upstream sends 3 tokens, then nothing until released.
    const ids = await conversations(HELD);
    turn = { text: TOKENS };
    const earlier: Array<{ role: 'user' | 'assistant'; content: string }> = [];
    for (let k = 0; k < HISTORY; k++) {
      const content = `Earlier question ${k}: how do I change the e-mail address of my account?`;
      await runConcurrent(HELD, 50, (i) =>
        timed(`${base}/chat/messages`, { headers, body: JSON.stringify({ conversationId: ids[i], messages: [{ role: 'user', content }] }) }, 'tok0'),
      );
      earlier.push({ role: 'user', content }, { role: 'assistant', content: TOKENS.join('').trim() });
    }
    turn = { text: TOKENS, hangAfterChunks: 3 };
    const open = async (url: string, init: { headers: Record<string, string>; body: string }): Promise<ReadableStreamDefaultReader<Uint8Array>> => {
      const res = await fetch(url, { method: 'POST', headers: { ...init.headers, 'content-type': 'application/json' }, body: init.body });
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('tok0')) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended early');
        seen += new TextDecoder().decode(value);
      }
      return reader;
    };
    const hold = async (server: typeof child, request: (i: number) => Promise<ReadableStreamDefaultReader<Uint8Array>>) => {
      const before = await usageOf(server);
      const beforeRss = memoryOf(server.pid!);
      const held: Array<Promise<void>> = [];
      // Opened in batches (a burst of 2,000 connects would overflow the listen backlog), each batch
      // once the previous one streams.
      for (let i = 0; i < HELD; i += 100) {
        const readers = await Promise.all(Array.from({ length: Math.min(100, HELD - i) }, (_, j) => request(i + j)));
        // Keep reading (comments, the final error) until the server ends each stream.
        for (const reader of readers) held.push((async () => void (await drain(reader)))());
      }
      await new Promise((r) => setTimeout(r, 1000));
      const during = await usageOf(server);
      const duringRss = memoryOf(server.pid!);
      fake.release();
      await Promise.allSettled(held);
      return {
        heapKb: (during.heapUsed - before.heapUsed) / 1024 / HELD,
        rssKb: ((duringRss.rss - beforeRss.rss) * 1024) / HELD,
        rss: duringRss.rss,
      };
    };
    const heldBare = await hold(bare.child, () =>
      open(bareUrl, { headers: {}, body: JSON.stringify({ messages: [...earlier, { role: 'user', content: 'Hold on.' }] }) }),
    );
    const heldOurs = await hold(child, (i) =>
      open(`${base}/chat/messages`, { headers, body: JSON.stringify({ conversationId: ids[i], messages: [{ role: 'user', content: 'Hold on.' }] }) }),
    );
    console.log(`${HELD} answers held open (3 tokens sent, the upstream quiet${HISTORY ? `, ${HISTORY} earlier turns each` : ''}), per held answer, heap after a full GC:`);
    console.table([
      { server: 'bare AI SDK', 'heap KB': heldBare.heapKb.toFixed(1), 'RSS KB': heldBare.rssKb.toFixed(1), 'RSS while held MiB': heldBare.rss.toFixed(0) },
      { server: 'POST /chat/messages', 'heap KB': heldOurs.heapKb.toFixed(1), 'RSS KB': heldOurs.rssKb.toFixed(1), 'RSS while held MiB': heldOurs.rss.toFixed(0) },
    ]);
    console.log(`server / bare heap per held answer: ${(heldOurs.heapKb / heldBare.heapKb).toFixed(2)} (RSS goal ≤ 40 KB per held stream)`);
  } finally {
    await Promise.all([stopChild(child), stopChild(bare.child)]);
    await fake.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
