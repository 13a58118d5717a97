import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../../test/fakes/action-endpoint.js';
import { adminAuth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';

/** The request id travels end to end: response header, every log line of the request, and the action endpoint. */
describe.each(dialects)('request id on action calls on $name', (dialect) => {
  let t: TestApp;
  let ep: ActionEndpoint;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    ep = await startActionEndpoint();
    t = await createTestApp({
      dialect,
      env: { ANSWERDESK_SECRET_KEY: 'test-secret-key-for-request-ids-0123', ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
      logger: { level: 'info', stream: { write: (line: string) => void logs.push(JSON.parse(line)) } },
    });
  });
  afterAll(async () => {
    await t.close();
    await ep.close();
  });

  const createAction = async (projectId: string, headers: Record<string, string> = {}) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${projectId}/actions`,
      headers: adminAuth(),
      payload: { name: 'echo', description: 'Echo the request.', url: `${ep.base}/echo`, headers, parameters: { type: 'object', properties: {} } },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().action.id as string;
  };

  it('sends the request id of an action test call as X-Request-Id, as logged and answered', async () => {
    const p = await createProject(t);
    const actionId = await createAction(p.project.id);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${p.project.id}/actions/${actionId}/test`,
      headers: adminAuth(),
      // A user token of the same name cannot replace it.
      payload: { arguments: {}, userTokens: { 'X-Request-Id': 'forged' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const requestId = res.headers['x-request-id'];
    expect(requestId).toMatch(/^req_\w{16}$/);
    expect(ep.receivedAt('/echo').at(-1)!.headers['x-request-id']).toBe(requestId);
    const callLine = logs.find((l) => l.msg === 'action call' && l.actionId === actionId);
    expect(callLine?.reqId).toBe(requestId);
    expect(logs.find((l) => l.msg === 'request completed' && l.reqId === requestId)).toBeDefined();
  });

  it('leaves an X-Request-Id header the action configures itself alone', async () => {
    const p = await createProject(t);
    const actionId = await createAction(p.project.id, { 'X-Request-Id': 'fixed-by-the-company' });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/actions/${actionId}/test`, headers: adminAuth(), payload: { arguments: {} } });
    expect(res.statusCode, res.body).toBe(200);
    expect(ep.receivedAt('/echo').at(-1)!.headers['x-request-id']).toBe('fixed-by-the-company');
  });
});
