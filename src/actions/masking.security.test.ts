import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_FORMS, echoedForms, startActionEndpoint, type ActionEndpoint, type EchoForm } from '../../test/fakes/action-endpoint.js';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import type { CreatedProject } from '../projects/projects.js';

// Values whose escaped, percent-encoded and base64 forms all differ from the raw text: `/` (escaped
// by PHP), `+` and `=` (base64 and URL syntax), a quote and a backslash (JSON), `<&>` (escaped by Go
// and by strict-ASCII encoders), spaces (`+` in forms).
const API_KEY = 'cfg/Key+7f3a "q" \\ <a&b>=';
const USER_TOKEN = 'user/tok+5d2e81==';
const SECRET_KEY = 'test-secret-key-for-actions-0123456789';
const FORMS = Object.keys(ECHO_FORMS) as EchoForm[];

/** The secrets' forms that `text` contains (none is the only right answer). */
function leaked(text: string): string[] {
  return [API_KEY, USER_TOKEN].flatMap((secret) => echoedForms(secret).filter((form) => text.includes(form)));
}

/**
 * An action endpoint that writes the request's headers back escaped (PHP's `\/`, `\uXXXX`),
 * percent-encoded or base64-encoded: the action's secret header and the request's user tokens reach
 * none of the tool output in the stream, the model, the model's text, the stored message, the public
 * history, an admin's test run or the logs.
 */
describe.each(dialects)('secrets echoed in other forms on $name', (dialect) => {
  let t: TestApp;
  let ep: ActionEndpoint;
  let fake: FakeOpenAICompatible;
  let p: CreatedProject;
  const logs: string[] = [];
  const actionIds = new Map<EchoForm, string>();

  beforeAll(async () => {
    ep = await startActionEndpoint();
    // The model repeats the tool result it read word for word: whatever it was given ends up in its text.
    fake = await startFakeOpenAICompatible({
      fallback: (request) => {
        const toolMessage = [...(request.body?.messages ?? [])].reverse().find((m: { role: string }) => m.role === 'tool');
        return { text: toolMessage ? `The endpoint said: ${toolMessage.content}` : 'Hello.' };
      },
    });
    t = await createTestApp({
      dialect,
      env: { ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true', OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake' },
      logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
    });
    p = await createProject(t, { model: 'openai-compatible:fake' });
    for (const form of FORMS) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/admin/projects/${p.project.id}/actions`,
        headers: adminAuth(),
        payload: { name: `echo_${form.replace(/-/g, '_')}`, description: `Echo (${form})`, url: `${ep.base}/echo-as/${form}`, headers: { 'X-Api-Key': API_KEY } },
      });
      expect(res.statusCode, res.body).toBe(201);
      actionIds.set(form, res.json().action.id);
    }
  });
  afterAll(async () => {
    await t.close();
    await ep.close();
    await fake.close();
  });

  it.each(FORMS)('%s: masked in the stream, the model, its text, the stored message and the history', async (form) => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: {} });
    const conversationId = created.json().conversationId as string;
    fake.enqueue({ toolCalls: [{ name: `echo_${form.replace(/-/g, '_')}`, arguments: {} }] });
    const modelCallsBefore = fake.requests.length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Who am I?' }], userTokens: { 'X-Customer-Token': USER_TOKEN } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { chunks, raw } = await parseAnswer(res.body);

    // The endpoint got the real values and wrote them back in its form: the leak is there to stop.
    const got = ep.receivedAt(`/echo-as/${form}`).at(-1)!;
    expect(got.headers).toMatchObject({ 'x-api-key': API_KEY, 'x-customer-token': USER_TOKEN });
    expect(leaked(ECHO_FORMS[form].render({ 'x-api-key': API_KEY, 'x-customer-token': USER_TOKEN })).length).toBeGreaterThan(0);

    const output = chunks.find((c) => c.type === 'tool-output-available') as { output: { status: number; body: unknown } } | undefined;
    expect(output?.output.status).toBe(200);
    // Masked, not dropped: the model still reads the rest of the answer.
    expect(JSON.stringify(output!.output.body)).toContain('********');
    const text = streamedText(chunks);
    expect(text).toContain('The endpoint said:');
    expect(text).toContain('********');

    const history = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(p.publicKey) });
    expect(history.statusCode).toBe(200);
    const rows = await t.deps.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).execute();
    expect(rows.find((r) => r.role === 'assistant')?.status).toBe('complete');
    const modelSaw = fake.requests.slice(modelCallsBefore).map((r) => JSON.stringify(r.body));

    for (const [where, content] of [
      ['stream', raw],
      ['tool output (decoded)', JSON.stringify(output!.output)],
      ['model text', text],
      ['model requests', modelSaw.join('\n')],
      ['stored rows', JSON.stringify(rows)],
      ['history', history.body],
      ['logs', logs.join('')],
    ] as const) {
      expect(leaked(content), where).toEqual([]);
    }
  });

  it.each(FORMS)('%s: masked in an admin test run', async (form) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/actions/${actionIds.get(form)}/test`,
      headers: adminAuth(),
      payload: { arguments: {}, userTokens: { 'X-Customer-Token': USER_TOKEN } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.response.status).toBe(200);
    expect(body.response.forModel).toContain('********');
    expect(leaked(res.body)).toEqual([]);
    expect(leaked(body.response.body)).toEqual([]);
    expect(leaked(body.response.forModel)).toEqual([]);
    expect(leaked(logs.join(''))).toEqual([]);
  });
});
