import { APICallError, RetryError } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { opensslHmac } from '../../test/identity.js';
import { parseAnswer } from '../../test/ui-stream.js';
import { serializeError } from '../lib/log-error.js';
import type { CreatedProject } from '../projects/projects.js';
import { SAFE_ERRORS } from './answer.js';

// What the conversation holds: none of it may reach a log line.
const QUESTION = 'My card ending 4417 was charged twice for order 88213, please refund it';
const EMAIL = 'jane.roe@example.org';
const NAME = 'Jane Roe';
const PAGE_TEXT = 'Invoice for Jane Roe, 12 Elm Street';

/**
 * A model provider that fails: the `answer failed` warning names the conversation, the model and the
 * provider's error (status, message, URL, sizes), never the body sent to the provider (the
 * conversation, the verified e-mail, the page text) nor the provider's response echoing it.
 */
describe.each(dialects)('logs of a failed answer on $name', (dialect) => {
  let t: TestApp;
  let fake: FakeOpenAICompatible;
  let p: CreatedProject;
  const lines: string[] = [];
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    t = await createTestApp({
      dialect,
      env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake-provider-key' },
      logger: { level: 'trace', stream: { write: (line: string) => lines.push(line) } },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  // Each test its own project, with a verified end user.
  beforeEach(async () => {
    p = await createProject(t, { model: 'openai-compatible:fake' });
    const verified = await t.app.inject({
      method: 'POST',
      url: '/api/v1/identity/verify',
      headers: auth(p.publicKey),
      payload: { userId: 'cust-9', hmac: opensslHmac(p.hmacSecret, 'cust-9'), email: EMAIL, name: NAME },
    });
    expect(verified.statusCode).toBe(200);
  });

  async function ask(): Promise<string> {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: { endUserExternalId: 'cust-9' } });
    const conversationId = created.json().conversationId as string;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(p.publicKey, { 'x-user-hmac': opensslHmac(p.hmacSecret, 'cust-9') }),
      payload: { conversationId, messages: [{ role: 'user', content: QUESTION }], pageContext: { title: 'Billing', textContent: PAGE_TEXT } },
    });
    expect(res.statusCode).toBe(200);
    const { chunks } = await parseAnswer(res.body);
    expect(chunks.find((c) => c.type === 'error')).toEqual({ type: 'error', errorText: SAFE_ERRORS.upstream });
    return conversationId;
  }

  /** The provider's answer quotes the request back, as some do in their error bodies. */
  const echoing = (status: number) => ({
    httpError: { status, body: { error: { message: `Upstream said no (${status})`, type: 'invalid_request_error' }, received: { messages: [QUESTION, EMAIL, NAME, PAGE_TEXT] } } },
  });

  it('logs a rejected request by status, message and URL, without the conversation', async () => {
    const before = lines.length;
    fake.enqueue(echoing(400));
    const conversationId = await ask();
    // The provider really received the personal data the log must not repeat.
    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    for (const text of [QUESTION, EMAIL, NAME, PAGE_TEXT]) expect(sent).toContain(text);

    const failed = records().slice(before).filter((r) => r.msg === 'answer failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      conversationId,
      model: 'openai-compatible:fake',
      err: { type: 'AI_APICallError', message: 'Upstream said no (400)', statusCode: 400, isRetryable: false, url: `${fake.baseUrl}/chat/completions` },
    });
    expect(failed[0]!.err.requestBodyBytes).toBeGreaterThan(QUESTION.length);
    expect(failed[0]!.err.responseBodyBytes).toBeGreaterThan(0);
    const logged = lines.slice(before).join('');
    for (const text of [QUESTION, EMAIL, NAME, PAGE_TEXT, 'sk-fake-provider-key']) expect(logged).not.toContain(text);
  });

  it('logs every attempt of a retried request the same way', async () => {
    const before = lines.length;
    fake.enqueue(echoing(503), echoing(503));
    await ask();
    const failed = records().slice(before).filter((r) => r.msg === 'answer failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.err).toMatchObject({ type: 'AI_RetryError', reason: 'maxRetriesExceeded' });
    expect(failed[0]!.err.errors).toEqual([
      expect.objectContaining({ type: 'AI_APICallError', statusCode: 503, isRetryable: true, url: `${fake.baseUrl}/chat/completions` }),
      expect.objectContaining({ type: 'AI_APICallError', statusCode: 503 }),
    ]);
    const logged = lines.slice(before).join('');
    for (const text of [QUESTION, EMAIL, NAME, PAGE_TEXT]) expect(logged).not.toContain(text);
  });
});

describe('serializeError', () => {
  it('keeps what went wrong and drops what it was about', () => {
    const apiError = new APICallError({
      message: 'Unauthorized',
      url: 'https://user:pw@generativelanguage.example.com/v1/models/m:generate?key=provider-secret#x',
      requestBodyValues: { messages: [{ role: 'user', content: QUESTION }] },
      statusCode: 401,
      responseHeaders: { 'set-cookie': 'session=abc' },
      responseBody: `{"echo":"${QUESTION}"}`,
    });
    const retry = new RetryError({ message: 'Failed after 2 attempts', reason: 'maxRetriesExceeded', errors: [apiError, apiError] });
    const out = serializeError(retry) as Record<string, any>;
    expect(out.errors[0]).toMatchObject({ type: 'AI_APICallError', statusCode: 401, url: 'https://generativelanguage.example.com/v1/models/m:generate' });
    expect(out.errors[0].stack.split('\n')[0]).toBe('AI_APICallError: Unauthorized');
    const text = JSON.stringify(out);
    for (const secret of [QUESTION, 'provider-secret', 'session=abc', 'user:pw']) expect(text).not.toContain(secret);
  });

  it('leaves out the message of errors that quote content, and follows causes', () => {
    const parse = Object.assign(new Error(`JSON parsing failed: Text: ${QUESTION}.`), { name: 'AI_JSONParseError', text: QUESTION });
    const wrapped = new Error('tool failed', { cause: parse });
    const out = serializeError(wrapped) as Record<string, any>;
    expect(out).toMatchObject({ type: 'Error', message: 'tool failed', cause: { type: 'AI_JSONParseError' } });
    expect(JSON.stringify(out)).not.toContain(QUESTION);
    expect(serializeError('plain text')).toBe('plain text');
  });
});
