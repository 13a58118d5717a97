import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../../test/fakes/openai-compatible.js';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { parseAnswer, streamedText } from '../../../test/ui-stream.js';
import { waitFor } from '../../../test/wait.js';
import { defaultMaxAnswers } from '../../agent/in-flight.js';
import type { CreatedProject } from '../../projects/projects.js';
import { TOO_MANY_ANSWERS } from './routes.js';

describe('the default cap on concurrent answers', () => {
  it('is a quarter of the heap at 0.5 MB per answer, at least 10', () => {
    const MiB = 1024 * 1024;
    expect(defaultMaxAnswers(512 * MiB)).toBe(256);
    expect(defaultMaxAnswers(4096 * MiB)).toBe(2048);
    expect(defaultMaxAnswers(8 * MiB)).toBe(10);
  });
});

/** Concurrent answers: a cap per node and one per project, so neither the heap nor one tenant can take a node. */
describe.each(dialects)('answer capacity on $name', (dialect) => {
  let fake: FakeOpenAICompatible;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({
      dialect,
      env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, ANSWERDESK_MAX_ANSWERS: '3', ANSWERDESK_MAX_ANSWERS_PER_PROJECT: '2' },
    });
  });
  afterAll(async () => {
    fake.resume();
    await t.close();
    await fake.close();
  });

  const project = (name: string) => createProject(t, { model: 'openai-compatible:fake' }, name);
  async function conversation(p: CreatedProject): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    return res.json().conversationId;
  }
  const send = (p: CreatedProject, conversationId: string, content = 'Where is my order?') =>
    t.app.inject({ method: 'POST', url: '/api/v1/chat/messages', headers: auth(p.publicKey), payload: { conversationId, messages: [{ role: 'user', content }] } });
  const stored = async (conversationId: string) => ({
    messages: await t.deps.store.db.selectFrom('messages').select(['role', 'content']).where('conversation_id', '=', conversationId).orderBy('seq').execute(),
    leases: await t.deps.store.db.selectFrom('answer_leases').select('conversation_id').where('conversation_id', '=', conversationId).execute(),
  });
  function expectRefused(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: TOO_MANY_ANSWERS });
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  }

  it('refuses answers beyond the per-project and the per-node cap with 503 and Retry-After, storing nothing, until one ends', async () => {
    const [a, b, c] = [await project('Alpha'), await project('Beta'), await project('Gamma')];
    const [a1, a2, a3, b1, c1] = [await conversation(a), await conversation(a), await conversation(a), await conversation(b), await conversation(c)];

    fake.setFallback(() => ({ text: ['Held ', 'answer.'], holdAfterChunks: 1 }));
    const open = [send(a, a1), send(a, a2)];
    await waitFor(() => fake.heldResponses() === 2);

    // Project Alpha has its two; the node has room for one more, but not for Alpha.
    const overProject = await send(a, a3);
    expectRefused(overProject);
    expect(await stored(a3)).toEqual({ messages: [], leases: [] });

    open.push(send(b, b1));
    await waitFor(() => fake.heldResponses() === 3);
    // The node runs three: Gamma, which runs none, is refused too.
    const overNode = await send(c, c1);
    expectRefused(overNode);
    expect(await stored(c1)).toEqual({ messages: [], leases: [] });

    fake.resume();
    for (const res of await Promise.all(open)) expect(streamedText((await parseAnswer(res.body)).chunks)).toBe('Held answer.');
    expect(t.app.answers.size).toBe(0);

    // Room again: both refused sends go through now, and nothing of the refusals is left behind.
    fake.setFallback(() => ({ text: 'Answered.' }));
    for (const [p, id] of [[a, a3], [c, c1]] as const) {
      expect(streamedText((await parseAnswer((await send(p, id)).body)).chunks)).toBe('Answered.');
      expect(await stored(id)).toEqual({
        messages: [
          { role: 'user', content: 'Where is my order?' },
          { role: 'assistant', content: 'Answered.' },
        ],
        leases: [],
      });
    }
  });

  it('frees the slot of a send that is refused for another reason', async () => {
    const p = await project('Delta');
    fake.setFallback(() => ({ text: 'Fine.' }));
    for (let i = 0; i < 5; i++) {
      const res = await send(p, 'conv_doesnotexist000000000');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Invalid conversation' });
    }
    expect(t.app.answers.size).toBe(0);
    const id = await conversation(p);
    expect((await send(p, id)).statusCode).toBe(200);
  });
});
