import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { startTcpProxy } from '../../test/fakes/tcp-proxy.js';
import { auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import { waitFor } from '../../test/wait.js';
import { base62 } from '../lib/ids.js';
import type { CreatedProject } from '../projects/projects.js';

const UNAVAILABLE = { error: 'Service unavailable' };

async function conversation(t: TestApp, p: CreatedProject): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
  expect(res.statusCode).toBe(201);
  return res.json().conversationId;
}

const send = (t: TestApp, p: CreatedProject, conversationId: string, content: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/messages',
    headers: auth(p.publicKey),
    payload: { conversationId, messages: [{ role: 'user', content }] },
  });

const assistantRows = (t: TestApp, conversationId: string) =>
  t.deps.store.db
    .selectFrom('messages')
    .select(['content', 'status'])
    .where('conversation_id', '=', conversationId)
    .where('role', '=', 'assistant')
    .orderBy('seq')
    .execute();

function expectUnavailable(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
  expect(res.statusCode).toBe(503);
  expect(res.json()).toEqual(UNAVAILABLE);
  expect(res.headers['retry-after']).toBe('5');
}

describe.each(dialects.filter((d) => d.name === 'postgres'))('a PostgreSQL outage', (dialect) => {
  let fake: FakeOpenAICompatible;
  const target = new URL(dialect.url);
  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
  });
  afterAll(() => fake.close());

  const projectSettings = { model: 'openai-compatible:fake' };

  /** Ends every connection named `applicationName`, as a failover, a restart or PgBouncer's idle timeout does. */
  async function terminateBackends(applicationName: string): Promise<number> {
    const admin = new pg.Client({ connectionString: dialect.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(
        'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1',
        [applicationName],
      );
      return rows[0]!.n;
    } finally {
      await admin.end();
    }
  }

  it('survives pg_terminate_backend on its connections mid-answer, stores the answer and serves again', async () => {
    const applicationName = `answerdesk_test_${base62(10).toLowerCase()}`;
    const t = await createTestApp({ dialect, applicationName, env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl } });
    try {
      const p = await createProject(t, projectSettings);
      const id = await conversation(t, p);
      fake.enqueue({ text: ['Parcels ', 'ship ', 'within ', 'two ', 'days.'], holdAfterChunks: 2 });
      const answer = send(t, p, id, 'When does my parcel ship?');
      await waitFor(() => fake.heldResponses() === 1);
      // The pool's connections sit idle while the model streams: all of them are cut.
      expect(await terminateBackends(applicationName)).toBeGreaterThan(0);
      fake.resume();
      const res = await answer;
      expect(streamedText((await parseAnswer(res.body)).chunks)).toBe('Parcels ship within two days.');
      expect(await assistantRows(t, id)).toEqual([{ content: 'Parcels ship within two days.', status: 'complete' }]);
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
      fake.enqueue({ text: 'Still here.' });
      expect(streamedText((await parseAnswer((await send(t, p, id, 'Are you still there?')).body)).chunks)).toBe('Still here.');
    } finally {
      await t.close();
    }
  });

  it('answers 503 with Retry-After while the database is gone, stores the answer in flight once it is back, and recovers by itself', async () => {
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const t = await createTestApp({
      dialect: { name: 'postgres', url: proxy.via(dialect.url) },
      env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, DATABASE_CONNECT_TIMEOUT_MS: '1000' },
    });
    try {
      const p = await createProject(t, projectSettings);
      const id = await conversation(t, p);
      fake.enqueue({ text: ['Refunds ', 'take ', 'five ', 'days.'], holdAfterChunks: 1 });
      const answer = send(t, p, id, 'How long do refunds take?');
      await waitFor(() => fake.heldResponses() === 1);

      // The database goes away: its connections are cut and new ones refused.
      proxy.setMode('refuse');
      expectUnavailable(await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, headers: auth(p.publicKey) }));
      expectUnavailable(await send(t, p, id, 'Hello?'));
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'unavailable', database: 'error', redis: 'disabled' });

      // The model finishes while the database is still away: storing the answer fails and is retried.
      const refusedBefore = proxy.refused();
      fake.resume();
      await waitFor(() => proxy.refused() > refusedBefore, 10_000, 'a refused attempt to store the answer');
      proxy.setMode('forward');

      const res = await answer;
      expect(streamedText((await parseAnswer(res.body)).chunks)).toBe('Refunds take five days.');
      expect(await assistantRows(t, id)).toEqual([{ content: 'Refunds take five days.', status: 'complete' }]);
      expect(await t.deps.store.db.selectFrom('answer_leases').selectAll().where('conversation_id', '=', id).execute()).toEqual([]);
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
      fake.enqueue({ text: 'Back online.' });
      expect(streamedText((await parseAnswer((await send(t, p, id, 'Thanks!')).body)).chunks)).toBe('Back online.');
    } finally {
      proxy.setMode('forward');
      await t.close();
      await proxy.close();
    }
  });

  it('fails requests and /ready with 503 within the timeouts while the database is silent, then recovers', async () => {
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const t = await createTestApp({
      dialect: { name: 'postgres', url: proxy.via(dialect.url) },
      env: { DATABASE_CONNECT_TIMEOUT_MS: '500', DATABASE_STATEMENT_TIMEOUT_MS: '500' },
    });
    try {
      const p = await createProject(t, projectSettings);
      const widget = () => t.app.inject({ method: 'GET', url: '/api/v1/widget/config', headers: auth(p.publicKey) });
      expect((await widget()).statusCode).toBe(200);

      // Packets dropped: open connections stop answering, new ones are never answered.
      proxy.setMode('silent');
      for (let i = 0; i < 3; i++) expectUnavailable(await widget());
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'unavailable', database: 'error' });

      proxy.setMode('forward');
      await waitFor(async () => (await t.app.inject({ method: 'GET', url: '/ready' })).statusCode === 200);
      expect((await widget()).statusCode).toBe(200);
    } finally {
      proxy.setMode('forward');
      await t.close();
      await proxy.close();
    }
  });
});

describe('a SQLite database locked by another process', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-busy-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers 503 with Retry-After when a write waits past SQLITE_BUSY_TIMEOUT_MS, and serves once the lock is gone', async () => {
    const file = join(dir, 'busy.db');
    const t = await createTestApp({ dialect: { name: 'sqlite', url: `sqlite:${file}` }, env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
    const other = new SQLite(file);
    try {
      const p = await createProject(t);
      const create = () => t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
      other.exec('begin immediate');
      expectUnavailable(await create());
      expect(await t.deps.store.db.selectFrom('conversations').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
      other.exec('rollback');
      expect((await create()).statusCode).toBe(201);
    } finally {
      other.close();
      await t.close();
    }
  });
});
