import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, sendMessage, type TestApp } from '../../../test/helper.js';
import { addSource } from '../../../test/support/knowledge.js';
import { parseAnswer } from '../../../test/ui-stream.js';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../knowledge/jobs.js';
import type { CreatedProject } from '../../projects/projects.js';
import type { Analytics } from '../insight/schema.js';

const SHIPPING = `# Shipping

## Delivery times

Standard delivery inside the Netherlands takes two business days. Express delivery arrives the next morning before noon.
`;

/** Every answer is stored with its outcome, which the admin reads and analytics count. */
describe.each(dialects)('answer outcomes ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let p: CreatedProject;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    p = await createProject(t, { model: 'builtin' }, 'Outcomes');
    await addSource(t.app, p.project.id, { type: 'markdown', content: SHIPPING });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  async function ask(conversationId: string, question: string) {
    const res = await sendMessage(t.app, p.publicKey, conversationId, question);
    expect(res.statusCode).toBe(200);
    return parseAnswer(res.body);
  }

  it('shows answered and declined answers in the admin read and counts them in analytics', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    await ask(conversationId, 'How long does standard delivery take in the Netherlands?');
    await ask(conversationId, 'Do you sell gift cards for birthdays?');

    const read = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/conversations/${conversationId}`, headers: adminAuth() });
    expect(read.statusCode).toBe(200);
    const messages = read.json().messages as Array<{ role: string; outcome: string | null; sources?: unknown[] }>;
    expect(messages.map((m) => [m.role, m.outcome])).toEqual([
      ['user', null],
      ['assistant', 'answered'],
      ['user', null],
      ['assistant', 'declined'],
    ]);
    expect(messages[1].sources).toHaveLength(1);
    expect(messages[3].sources).toBeUndefined();

    // The runtime history keeps its own shape: outcomes are for the project's admins.
    const runtime = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(p.publicKey) });
    expect(runtime.json().messages.some((m: Record<string, unknown>) => 'outcome' in m)).toBe(false);

    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/analytics`, headers: adminAuth() });
    expect(res.statusCode).toBe(200);
    const body: Analytics = res.json();
    expect(body.outcomes).toEqual({ answered: 1, declined: 1, action: 0, error: 0, answeredRate: 0.5, declinedRate: 0.5 });

    const empty = await createProject(t, {}, 'No answers');
    const none = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${empty.project.id}/analytics`, headers: adminAuth() });
    expect(none.json().outcomes).toEqual({ answered: 0, declined: 0, action: 0, error: 0, answeredRate: null, declinedRate: null });
  });
});
