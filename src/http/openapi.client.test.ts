import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UIMessage, UIMessageChunk } from 'ai';
import type { z } from 'zod';
import { createProject, createTestApp, type TestApp } from '../../test/helper.js';
import type { conversationList, conversationWithMessages } from '../api/conversations/schema.js';
import type { Feedback } from '../api/feedback/schema.js';

/** What test/openapi-client/flow.ts returns (that file compiles only beside its generated types). */
interface FlowResult {
  created: { conversationId: string };
  anonymous: { conversationId: string };
  streamHeader: string | null;
  chunks: UIMessageChunk[];
  answer: UIMessage | undefined;
  list: z.output<typeof conversationList>;
  history: z.output<typeof conversationWithMessages>;
  feedback: Feedback;
  notFound: { error: string };
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/**
 * A third party's client, generated from the document the server serves: openapi-typescript writes
 * the types, tsc checks a small program written against them (test/openapi-client/flow.ts, which
 * also holds misuses the compiler must refuse), and that same program then talks to the real server
 * over a real port with openapi-fetch, reading the answer stream with the AI SDK's own parser. The
 * generated files live in a scratch folder only: nothing generated is checked in.
 */
// The test runs the TypeScript compiler in a child process: 30 s is not always enough on a busy machine.
describe('a client generated from the OpenAPI document', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await mkdir(path.join(ROOT, 'test-artifacts'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, 'test-artifacts', 'openapi-client-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('generates types that type-check, and streams an answer through openapi-fetch without special-casing', async () => {
    const served = await fetch(`${base}/api/v1/openapi.json`);
    expect(served.status).toBe(200);
    const types = astToString(await openapiTS(await served.json()));
    await writeFile(path.join(dir, 'api.d.ts'), types);
    await copyFile(path.join(ROOT, 'test', 'openapi-client', 'flow.ts'), path.join(dir, 'flow.ts'));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['flow.ts', 'api.d.ts'],
      }),
    );
    // The named shapes became named types.
    for (const name of ['Conversation', 'ConversationSummary', 'Message', 'ChatMessage', 'PageContext', 'Feedback', 'WidgetConfig', 'UIMessageChunk', 'Error']) {
      expect(types).toMatch(new RegExp(`\\n\\s+${name}: \\{|\\n\\s+${name}:`));
    }

    // tsc fails on any type error, and on any @ts-expect-error that is not an error (types gone `any`).
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(checked).toBe('');

    const p = await createProject(t);
    const { run: flow } = (await import(path.join(dir, 'flow.ts'))) as { run: (base: string, key: string) => Promise<FlowResult> };
    const result = await flow(base, p.publicKey);

    expect(result.created.conversationId).toMatch(/^conv_/);
    expect(result.anonymous.conversationId).toMatch(/^conv_/);
    expect(result.streamHeader).toBe('v1');
    const kinds = result.chunks.map((c) => c.type);
    expect(kinds[0]).toBe('start');
    expect(kinds.at(-1)).toBe('finish');
    expect(kinds).toEqual(expect.arrayContaining(['tool-input-available', 'tool-output-available', 'text-delta']));
    const text = result.chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : [])).join('');
    expect(text.length).toBeGreaterThan(10);
    expect(result.answer?.parts.some((part) => part.type === 'text' && part.text === text)).toBe(true);

    expect(result.list.conversations.map((c) => c.id)).toEqual([result.created.conversationId]);
    expect(result.list.conversations[0]).toMatchObject({ status: 'ACTIVE', messageCount: 2, lastMessageRole: 'ASSISTANT' });
    expect(result.history.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hello! How long do refunds take?'],
      ['assistant', text],
    ]);
    expect(result.feedback).toMatchObject({ conversationId: result.created.conversationId, rating: 'POSITIVE', messageId: result.history.messages[1].id });
    expect(result.notFound).toEqual({ error: 'Conversation not found' });

    // What the client stored and read is what the database holds.
    const rows = await t.deps.store.db
      .selectFrom('messages')
      .select(['role', 'content', 'status'])
      .where('conversation_id', '=', result.created.conversationId)
      .orderBy('seq')
      .execute();
    expect(rows).toEqual([
      { role: 'user', content: 'Hello! How long do refunds take?', status: 'complete' },
      { role: 'assistant', content: text, status: 'complete' },
    ]);
  });
});
