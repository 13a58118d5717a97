import { jsonSchema, readUIMessageStream, tool, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { createConversation } from '../conversations/conversations.js';
import { appendMessage, listMessages } from '../conversations/messages.js';
import { newId } from '../lib/ids.js';
import type { CreatedProject } from '../projects/projects.js';
import { streamAnswer } from './answer.js';
import type { ToolFactory } from './tools.js';

const HITS = [
  {
    chunkId: 'chunk_1',
    sourceId: 'ks_refunds',
    title: 'Refund policy',
    url: 'https://help.shop.test/refunds',
    headingPath: ['Billing', 'Refunds'],
    text: 'Refunds are paid back to the original card. A refund takes five business days to arrive after we approve it.',
    score: 3.2,
  },
  {
    chunkId: 'chunk_2',
    sourceId: 'ks_faq',
    title: 'Billing FAQ',
    url: null,
    headingPath: ['FAQ'],
    text: 'Refunds for annual plans are prorated. Refunds take five business days.',
    score: 2.1,
  },
];

/** The hits as the knowledge tool hands them over: each with the number to cite it by. */
const NUMBERED = HITS.map((h, i) => ({ ...h, n: i + 1, match: 1 }));

/** A knowledge tool and an action tool as the knowledge and actions parts provide them. */
const factories: ToolFactory[] = [
  async () => ({
    search_knowledge: tool({
      description: 'Search the help content.',
      inputSchema: jsonSchema<{ query: string }>({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }),
      execute: async ({ query }) => (/refund/i.test(query) ? { found: true, results: NUMBERED } : { found: false, results: [], note: 'Nothing relevant was found.' }),
    }),
  }),
  async (ctx) => ({
    track_order: tool({
      description: 'Track an order. Examples: where is my order; track my package',
      inputSchema: jsonSchema<{ orderId: string }>({
        type: 'object',
        properties: { orderId: { type: 'string', description: 'Order number' } },
        required: ['orderId'],
      }),
      execute: async ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'DHL', forUser: ctx.endUser?.externalId ?? null }),
    }),
  }),
];

describe.each(dialects)('streamAnswer on $name', (dialect) => {
  let fake: FakeOpenAICompatible;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({ dialect, env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  async function ask(p: CreatedProject, questions: string[]): Promise<Array<{ chunks: UIMessageChunk[]; message: UIMessage; id: string; conversationId: string }>> {
    const conv = await createConversation(t.deps.store.db, p.project.id, 'dana');
    const answers = [];
    for (const question of questions) {
      await appendMessage(t.deps.store.db, conv, { role: 'user', content: question, status: 'complete' });
      const id = newId('msg');
      let settled = false;
      const stream = streamAnswer({
        deps: t.deps,
        project: p.project,
        conversation: conv,
        endUser: { id: conv.end_user_id!, externalId: 'dana', verified: false },
        verifiedUser: null,
        userTokens: {},
        assistantMessageId: id,
        log: t.app.log,
        factories,
        onSettled: async () => void (settled = true),
      });
      const [forChunks, forMessage] = stream.tee();
      const chunks: UIMessageChunk[] = [];
      const collect = (async () => {
        const reader = forChunks.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
      })();
      let message: UIMessage | undefined;
      for await (const m of readUIMessageStream({ stream: forMessage })) message = m;
      await collect;
      expect(settled).toBe(true);
      answers.push({ chunks, message: message!, id, conversationId: conv.id });
    }
    return answers;
  }

  it('runs a real model through a tool call, then answers with source parts, and stores it all', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    fake.enqueue(
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'refund time' }, pieces: 3 }], usage: { prompt_tokens: 50, completion_tokens: 8 } },
      { text: ['Refunds take ', 'five business days [1].'], usage: { prompt_tokens: 120, completion_tokens: 9 } },
    );
    const [{ chunks, message, id, conversationId }] = await ask(p, ['How long do refunds take?']);

    expect(chunks.filter((c) => c.type === 'tool-input-delta').length).toBe(3);
    expect(chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'search_knowledge', input: { query: 'refund time' } });
    expect(chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { results: NUMBERED } });
    // Only the passage it cited ([1]) is a source; the second hit was found but not used.
    expect(chunks.filter((c) => c.type === 'source-url' || c.type === 'source-document')).toEqual([
      { type: 'source-url', sourceId: 'ks_refunds', url: 'https://help.shop.test/refunds', title: 'Refund policy' },
    ]);
    expect(chunks[0]).toEqual({ type: 'start', messageId: id, messageMetadata: { conversationId } });
    expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish' });

    // The second model call carried the tool result back.
    const second = fake.requests[fake.requests.length - 1].body;
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: expect.any(String) });
    expect(JSON.parse(second.messages.at(-1).content)).toEqual({ found: true, results: NUMBERED });
    expect(second.tools.map((x: { function: { name: string } }) => x.function.name).sort()).toEqual(['search_knowledge', 'track_order']);

    const [question, row] = await listMessages(t.deps.store.db, conversationId);
    expect(question.outcome).toBeNull();
    expect(row).toMatchObject({ id, role: 'assistant', status: 'complete', content: 'Refunds take five business days [1].', outcome: 'answered' });
    expect(JSON.parse(row.sources!)).toEqual([{ sourceId: 'ks_refunds', type: 'url', url: 'https://help.shop.test/refunds', title: 'Refund policy' }]);
    expect(JSON.parse(row.usage!)).toEqual({ inputTokens: 170, outputTokens: 17, totalTokens: 187 });
    const parts = JSON.parse(row.parts!);
    expect(parts).toEqual(message.parts.filter((x) => x.type !== 'step-start'));
    expect(parts.map((x: { type: string }) => x.type)).toEqual(['tool-search_knowledge', 'text', 'source-url']);
  });

  it('attaches the passages a real model quoted without citing them, and none when it declines', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    fake.enqueue(
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'refund annual plan' } }] },
      { text: 'Good news: refunds for annual plans are prorated. Refunds take five business days.' },
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'seashell payments' } }] },
      { text: "I'm sorry, I don't know whether we accept seashells. Could you rephrase, or shall I put you in touch with the team?" },
    );
    const [quoted, declined] = await ask(p, ['Are annual plans refunded?', 'Can I pay with seashells?']);
    expect(quoted.chunks.filter((c) => c.type === 'source-document')).toEqual([{ type: 'source-document', sourceId: 'ks_faq', mediaType: 'text/plain', title: 'Billing FAQ' }]);
    expect(declined.chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { found: false, results: [] } });
    expect(declined.chunks.some((c) => c.type === 'source-url' || c.type === 'source-document')).toBe(false);
    const rows = await listMessages(t.deps.store.db, quoted.conversationId);
    expect(rows.map((r) => [r.outcome, r.sources ? JSON.parse(r.sources).map((x: { sourceId: string }) => x.sourceId) : null])).toEqual([
      [null, null],
      ['answered', ['ks_faq']],
      [null, null],
      ['declined', null],
    ]);
  });

  it('answers with the builtin model from knowledge, with citations, and says when it does not know', async () => {
    const p = await createProject(t);
    const [refund, unknown] = await ask(p, ['How long does a refund take?', 'Can I pay with seashells?']);
    const text = refund.message.parts.find((x) => x.type === 'text');
    expect(text).toMatchObject({ text: expect.stringMatching(/five business days.*\[1\]/s) });
    expect(refund.chunks.filter((c) => c.type === 'source-url')).toHaveLength(1);
    expect(refund.chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(3);
    expect(unknown.message.parts.find((x) => x.type === 'text')).toMatchObject({ text: expect.stringMatching(/couldn't find anything/) });
    expect(unknown.chunks.some((c) => c.type === 'source-url')).toBe(false);
    const rows = await listMessages(t.deps.store.db, refund.conversationId);
    expect(rows.map((r) => [r.role, r.outcome])).toEqual([
      ['user', null],
      ['assistant', 'answered'],
      ['user', null],
      ['assistant', 'declined'],
    ]);
  });

  it('stores a failed answer with the outcome error', async () => {
    const p = await createProject(t, { model: 'openai-compatible:fake' });
    fake.enqueue({ httpError: { status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } } });
    const [failed] = await ask(p, ['How long do refunds take?']);
    const [, row] = await listMessages(t.deps.store.db, failed.conversationId);
    expect(row).toMatchObject({ status: 'error', outcome: 'error' });
  });

  it('calls an action with the builtin model once its parameters are known, asking for them first', async () => {
    const p = await createProject(t);
    const [ask1, done] = await ask(p, ['Where is my order?', 'It is A-12345']);
    expect(ask1.message.parts.find((x) => x.type === 'text')).toMatchObject({ text: expect.stringMatching(/order number/i) });
    expect(ask1.chunks.some((c) => c.type === 'tool-input-available')).toBe(false);
    expect(done.chunks.find((c) => c.type === 'tool-input-available')).toMatchObject({ toolName: 'track_order', input: { orderId: 'A-12345' } });
    expect(done.message.parts.find((x) => x.type === 'text')).toMatchObject({ text: expect.stringMatching(/shipped/) });
    const rows = await listMessages(t.deps.store.db, done.conversationId);
    expect(rows.map((r) => r.outcome)).toEqual([null, 'answered', null, 'action']);
  });
});
