import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import type { Store } from '../store/index.js';


const SAME_ORIGIN = { host: 'dash.example', 'sec-fetch-site': 'same-origin' };

describe.each(dialects)('answerdesk user on $name', { timeout: 180_000 }, (dialect) => {
  let db: CliDatabase;
  let store: Store;
  let t: TestApp;

  beforeAll(async () => {
    db = await openCliDatabase(dialect);
    store = db.store;
    // The app over the same database: what the CLI writes must work against the API.
    t = await createTestApp({ dialect, store });
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  const cli = (args: string[], input?: string) => runCli(args, db.env, input);
  const login = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: SAME_ORIGIN, payload: { email, password } });

  it('adds an owner and a project member, lists, resets a password and removes a user', async () => {
    const owner = await cli(['user', 'add', '--email', 'Ada@Example.com', '--name', 'Ada', '--role', 'owner', '--password-stdin'], 'owner password 1\n');
    expect(owner.stderr).toBe('');
    expect(owner.code).toBe(0);
    expect(owner.stdout).toMatch(/^Created owner ada@example\.com \(user_[0-9A-Za-z]{22}\)\.$/m);
    const row = await store.db.selectFrom('users').selectAll().where('email', '=', 'ada@example.com').executeTakeFirstOrThrow();
    expect(row.role).toBe('owner');
    expect(row.password_hash).not.toContain('owner password');
    expect((await login('ada@example.com', 'owner password 1')).statusCode).toBe(200);
    // The password is one line; the line break is not part of it.
    expect((await login('ada@example.com', 'owner password 1\n')).statusCode).toBe(401);

    const p = await createProject(t, {}, 'Cli Roles');
    const member = await cli(
      ['user', 'add', '--email', 'bob@example.com', '--project', p.project.id, '--role', 'agent', '--name', 'Bob', '--password-stdin', '--json'],
      'member password 1\n',
    );
    expect(member.code).toBe(0);
    const created = JSON.parse(member.stdout).user;
    expect(created).toMatchObject({ email: 'bob@example.com', name: 'Bob', role: 'member', memberships: [{ projectId: p.project.id, role: 'agent' }] });
    const changed = await cli(['user', 'add', '--email', 'bob@example.com', '--project', p.project.id, '--role', 'viewer']);
    expect(changed.code).toBe(0);
    expect(changed.stdout).toBe(`bob@example.com is now viewer of ${p.project.id}.\n`);

    const list = await cli(['user', 'list', '--json']);
    expect(JSON.parse(list.stdout).users.map((u: { email: string; memberships: unknown[] }) => [u.email, u.memberships])).toEqual([
      ['ada@example.com', []],
      ['bob@example.com', [{ projectId: p.project.id, role: 'viewer' }]],
    ]);

    const session = await login('bob@example.com', 'member password 1');
    const cookie = String(session.headers['set-cookie']).split(';')[0];
    const reset = await cli(['user', 'reset-password', '--email', 'bob@example.com', '--password-stdin'], 'member password 2\n');
    expect(reset.code).toBe(0);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).statusCode).toBe(401);
    expect((await login('bob@example.com', 'member password 2')).statusCode).toBe(200);

    const removed = await cli(['user', 'remove', '--email', 'bob@example.com']);
    expect(removed.code).toBe(0);
    expect(await store.db.selectFrom('users').select('id').where('email', '=', 'bob@example.com').execute()).toEqual([]);
    const last = await cli(['user', 'remove', '--email', 'ada@example.com']);
    expect(last.code).toBe(1);
    expect(last.stderr).toBe('Error: The last owner cannot be removed or made a member\n');
  });

  it('refuses bad input with usage errors before touching the database', async () => {
    const noPassword = await cli(['user', 'add', '--email', 'x@example.com', '--name', 'X', '--role', 'owner']);
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toMatch(/^Error: Missing --password-stdin/);
    const short = await cli(['user', 'add', '--email', 'x@example.com', '--name', 'X', '--role', 'owner', '--password-stdin'], 'short\n');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 10 characters');
    const role = await cli(['user', 'add', '--email', 'x@example.com', '--name', 'X', '--role', 'agent', '--password-stdin'], 'long enough pw\n');
    expect(role.code).toBe(2);
    const email = await cli(['user', 'add', '--email', 'not-an-email', '--name', 'X', '--role', 'owner', '--password-stdin'], 'long enough pw\n');
    expect(email.code).toBe(2);
    expect(await store.db.selectFrom('users').select('id').where('email', '=', 'x@example.com').execute()).toEqual([]);
  });
});
