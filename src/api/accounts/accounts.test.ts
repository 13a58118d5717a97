import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { issueSetupToken } from '../../accounts/setup.js';
import type { ProjectRole, UserRole } from '../../accounts/types.js';
import { createUser } from '../../accounts/users.js';
import { base62 } from '../../lib/ids.js';
import { hashKey } from '../../lib/keys.js';

/** The dashboard's own origin in these tests: every request names this host. */
const HOST = 'dash.example';
const SAME_ORIGIN = { host: HOST, 'sec-fetch-site': 'same-origin', origin: `http://${HOST}` };
const PASSWORD = 'correct horse battery';

/** `answerdesk_session=<token>` from a Set-Cookie header. */
function sessionCookie(setCookie: string | string[] | undefined): string {
  const header = Array.isArray(setCookie) ? setCookie.join('\n') : (setCookie ?? '');
  const match = /answerdesk_session=([^;]*)/.exec(header);
  if (!match) throw new Error(`no session cookie in ${header}`);
  return match[1];
}

describe.each(dialects)('accounts, sessions and roles on $name', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(() => t.close());

  const email = (what: string) => `${what}-${base62(8).toLowerCase()}@example.com`;

  async function user(role: UserRole, memberships: Array<{ projectId: string; role: ProjectRole }> = [], password = PASSWORD) {
    return createUser(t.deps.store.db, { email: email(role), name: `A ${role}`, role, password, memberships });
  }

  async function login(address: string, password = PASSWORD, headers: Record<string, string> = SAME_ORIGIN) {
    return t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers, payload: { email: address, password } });
  }

  /** Signed-in request headers for a new user. */
  async function signedIn(role: UserRole, memberships: Array<{ projectId: string; role: ProjectRole }> = []) {
    const u = await user(role, memberships);
    const res = await login(u.email);
    expect(res.statusCode).toBe(200);
    return { user: u, headers: { ...SAME_ORIGIN, cookie: `answerdesk_session=${sessionCookie(res.headers['set-cookie'])}` } };
  }

  it('signs in with a cookie, tells who is signed in, and signs out on every request after', async () => {
    const p = await createProject(t, {}, 'Signed');
    const u = await user('member', [{ projectId: p.project.id, role: 'agent' }]);
    const res = await login(u.email.toUpperCase());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ user: { id: u.id, email: u.email, name: 'A member', role: 'member' } });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^answerdesk_session=[0-9A-Za-z]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain('Secure');
    const token = sessionCookie(res.headers['set-cookie']);

    // Stored by hash only.
    const rows = await t.deps.store.db.selectFrom('sessions').selectAll().where('user_id', '=', u.id).execute();
    expect(rows.map((r) => r.id_hash)).toEqual([hashKey(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);
    const stored = await t.deps.store.db.selectFrom('users').select('password_hash').where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(stored.password_hash).toMatch(/^scrypt\$15\$8\$3\$/);
    expect(stored.password_hash).not.toContain(PASSWORD);

    const cookie = `answerdesk_session=${token}`;
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({ user: { id: u.id, email: u.email, name: 'A member', role: 'member' }, memberships: [{ projectId: p.project.id, role: 'agent' }] });
    // The cookie is a credential on the admin API.
    const project = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers: { cookie } });
    expect(project.statusCode).toBe(200);

    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...SAME_ORIGIN, cookie } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^answerdesk_session=; .*Max-Age=0/);
    expect(await t.deps.store.db.selectFrom('sessions').selectAll().where('user_id', '=', u.id).execute()).toEqual([]);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
    expect(after.statusCode).toBe(401);
    const admin = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers: { cookie } });
    expect(admin.statusCode).toBe(401);
  });

  it('answers a wrong password and an unknown e-mail alike', async () => {
    const u = await user('owner');
    const wrong = await login(u.email, 'not the password');
    const unknown = await login(email('nobody'), 'not the password');
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Invalid email or password' });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(Object.keys(wrong.headers).sort()).toEqual(Object.keys(unknown.headers).sort());
    const none = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me' });
    expect(none.statusCode).toBe(401);
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'x' } });
    expect(bad.statusCode).toBe(400);
  });

  it('answers 429 after 10 failed sign-ins for one e-mail, even with the right password then', async () => {
    const app = await createTestApp({ dialect, env: { TRUST_PROXY: '1' } });
    try {
      const u = await createUser(app.deps.store.db, { email: email('mail'), name: 'Mail', role: 'member', password: PASSWORD });
      // Each from its own address, so only the per-e-mail count is at work.
      const from = (i: number) => ({ ...SAME_ORIGIN, 'x-forwarded-for': `198.51.100.${i}` });
      const attempt = (password: string, i: number) =>
        app.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: from(i), payload: { email: u.email, password } });
      for (let i = 0; i < 10; i++) expect((await attempt('wrong password', i)).statusCode).toBe(401);
      const blocked = await attempt(PASSWORD, 50);
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json()).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(60);
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
      expect(blocked.headers['set-cookie']).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('answers 429 after 10 failed sign-ins from one address, whatever the e-mail', async () => {
    const app = await createTestApp({ dialect, env: { TRUST_PROXY: '1' } });
    try {
      const headers = { ...SAME_ORIGIN, 'x-forwarded-for': '203.0.113.7' };
      const u = await createUser(app.deps.store.db, { email: email('addr'), name: 'Addr', role: 'member', password: PASSWORD });
      for (let i = 0; i < 10; i++) {
        const res = await app.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers, payload: { email: email(`guess${i}`), password: 'wrong password' } });
        expect(res.statusCode).toBe(401);
      }
      const res = await app.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers, payload: { email: u.email, password: PASSWORD } });
      expect(res.statusCode).toBe(429);
      // Another address is not affected.
      const other = await app.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { ...headers, 'x-forwarded-for': '203.0.113.8' }, payload: { email: u.email, password: PASSWORD } });
      expect(other.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('marks the cookie Secure when served over https (behind a trusted proxy)', async () => {
    const app = await createTestApp({ dialect, env: { TRUST_PROXY: '1' } });
    try {
      const u = await createUser(app.deps.store.db, { email: email('tls'), name: 'TLS', role: 'owner', password: PASSWORD });
      const res = await app.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { host: HOST, 'x-forwarded-proto': 'https', 'sec-fetch-site': 'same-origin' },
        payload: { email: u.email, password: PASSWORD },
      });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['set-cookie'])).toContain('; Secure');
    } finally {
      await app.close();
    }
  });

  it('lets a viewer read but not write', async () => {
    const p = await createProject(t, {}, 'Viewed');
    const { headers } = await signedIn('member', [{ projectId: p.project.id, role: 'viewer' }]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}/skills`, headers })).statusCode).toBe(200);
    const patch = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}`, headers, payload: { name: 'Renamed' } });
    expect(patch.statusCode).toBe(403);
    expect(patch.json()).toEqual({ error: 'Forbidden' });
    const skill = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/skills`, headers, payload: { name: 'Nope' } });
    expect(skill.statusCode).toBe(403);
    const row = await t.deps.store.db.selectFrom('projects').select('name').where('id', '=', p.project.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Viewed');
  });

  it('lets an agent close a conversation but not change settings or see users', async () => {
    const p = await createProject(t, {}, 'Worked');
    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId: string = conv.json().conversationId;
    const { headers } = await signedIn('member', [{ projectId: p.project.id, role: 'agent' }]);
    const close = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/conversations/${conversationId}/close`, headers });
    expect(close.statusCode).toBe(200);
    const row = await t.deps.store.db.selectFrom('conversations').select('status').where('id', '=', conversationId).executeTakeFirstOrThrow();
    expect(row.status).toBe('CLOSED');
    const settings = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}`, headers, payload: { settings: { instructions: 'x' } } });
    expect(settings.statusCode).toBe(403);
    const keys = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/keys`, headers, payload: { kind: 'secret' } });
    expect(keys.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers })).statusCode).toBe(403);
  });

  it('shows a member only the projects they have a role on', async () => {
    const mine = await createProject(t, {}, 'Mine');
    const theirs = await createProject(t, {}, 'Theirs');
    const { headers } = await signedIn('member', [{ projectId: mine.project.id, role: 'admin' }]);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().projects.map((p: { id: string }) => p.id)).toEqual([mine.project.id]);
    const other = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${theirs.project.id}`, headers });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ error: 'Project not found' });
    // An admin member configures their project, but creating or deleting projects is for owners.
    const patch = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${mine.project.id}`, headers, payload: { name: 'Mine, renamed' } });
    expect(patch.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers, payload: { name: 'New' } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${mine.project.id}`, headers })).statusCode).toBe(403);

    // An owner sees and creates every project.
    const owner = await signedIn('owner');
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers: owner.headers });
    expect(all.json().projects.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([mine.project.id, theirs.project.id]));
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: owner.headers, payload: { name: 'By owner' } });
    expect(created.statusCode).toBe(201);
  });

  it('keeps users and invites to owners, and ends a removed user’s sessions at once', async () => {
    const p = await createProject(t, {}, 'Staff');
    const owner = await signedIn('owner');
    const member = await signedIn('member', [{ projectId: p.project.id, role: 'admin' }]);
    for (const [method, url] of [
      ['GET', '/api/v1/admin/users'],
      ['GET', '/api/v1/admin/invites'],
      ['POST', '/api/v1/admin/invites'],
      ['PATCH', `/api/v1/admin/users/${owner.user.id}`],
      ['PUT', `/api/v1/admin/users/${member.user.id}/memberships/${p.project.id}`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: member.headers, payload: method === 'GET' ? undefined : { role: 'admin', email: 'x@example.com' } });
      expect([method, url, res.statusCode, res.json()]).toEqual([method, url, 403, { error: 'Forbidden' }]);
    }
    // A project's secret key is no owner either.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers: auth(p.secretKey) })).statusCode).toBe(403);

    const users = await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers: owner.headers });
    expect(users.statusCode).toBe(200);
    const listed = users.json().users.find((u: { id: string }) => u.id === member.user.id);
    expect(listed).toMatchObject({ email: member.user.email, role: 'member', memberships: [{ projectId: p.project.id, role: 'admin' }] });

    const demote = await t.app.inject({ method: 'PUT', url: `/api/v1/admin/users/${member.user.id}/memberships/${p.project.id}`, headers: owner.headers, payload: { role: 'viewer' } });
    expect(demote.statusCode).toBe(200);
    expect(demote.json().user.memberships).toEqual([{ projectId: p.project.id, role: 'viewer' }]);
    // The new role holds on the member's very next request.
    const write = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}`, headers: member.headers, payload: { name: 'x' } });
    expect(write.statusCode).toBe(403);

    const removed = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${member.user.id}`, headers: owner.headers });
    expect(removed.statusCode).toBe(204);
    expect(await t.deps.store.db.selectFrom('sessions').selectAll().where('user_id', '=', member.user.id).execute()).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers: member.headers })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: member.headers })).statusCode).toBe(401);
  });

  it('refuses cookie writes from another site; same-origin and header credentials pass', async () => {
    const p = await createProject(t, {}, 'Csrf');
    const { headers } = await signedIn('member', [{ projectId: p.project.id, role: 'admin' }]);
    const cookie = headers.cookie;
    const patch = (h: Record<string, string>, name: string) =>
      t.app.inject({ method: 'PATCH', url: `/api/v1/admin/projects/${p.project.id}`, headers: h, payload: { name } });
    const refused: Array<Record<string, string>> = [
      { host: HOST, cookie, 'sec-fetch-site': 'cross-site' },
      { host: HOST, cookie, 'sec-fetch-site': 'same-site' },
      { host: HOST, cookie, origin: 'https://evil.example' },
      { host: HOST, cookie },
    ];
    for (const h of refused) {
      const res = await patch(h, 'Evil');
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Forbidden' });
    }
    expect((await patch({ host: HOST, cookie, 'sec-fetch-site': 'same-origin' }, 'Fetch metadata')).statusCode).toBe(200);
    expect((await patch({ host: HOST, cookie, origin: `http://${HOST}` }, 'Origin')).statusCode).toBe(200);
    // Reads need no origin check; header credentials are not ambient, so no CSRF check applies to them.
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${p.project.id}`, headers: { cookie, 'sec-fetch-site': 'cross-site' } })).statusCode).toBe(200);
    expect((await patch(adminAuth({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }), 'Token')).statusCode).toBe(200);
    expect((await patch(auth(p.secretKey, { origin: 'https://evil.example' }), 'Secret key')).statusCode).toBe(200);
    const row = await t.deps.store.db.selectFrom('projects').select('name').where('id', '=', p.project.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Secret key');
    // Signing out from another site is refused too, and the session lives on.
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
    expect(out.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).statusCode).toBe(200);
  });

  it('changes a password and ends the other sessions', async () => {
    const u = await user('member');
    const first = sessionCookie((await login(u.email)).headers['set-cookie']);
    const second = sessionCookie((await login(u.email)).headers['set-cookie']);
    const headers = { ...SAME_ORIGIN, cookie: `answerdesk_session=${first}` };
    const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers, payload: { currentPassword: 'nope', newPassword: 'a new long password' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ error: 'Current password is incorrect' });
    const short = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers, payload: { currentPassword: PASSWORD, newPassword: 'short' } });
    expect(short.statusCode).toBe(400);
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers, payload: { currentPassword: PASSWORD, newPassword: 'a new long password' } });
    expect(ok.statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: `answerdesk_session=${first}` } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: `answerdesk_session=${second}` } })).statusCode).toBe(401);
    expect((await login(u.email)).statusCode).toBe(401);
    expect((await login(u.email, 'a new long password')).statusCode).toBe(200);
  });
});

describe.each(dialects)('first-run setup and invites on $name', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(() => t.close());

  it('creates the first owner once, with a printed token only', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/setup' })).json()).toEqual({ required: true });
    const token = (await issueSetupToken(t.deps.store.db))!;
    const other = (await issueSetupToken(t.deps.store.db))!;
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
    const stored = await t.deps.store.db.selectFrom('setup_tokens').select('token_hash').execute();
    expect(stored.map((r) => r.token_hash).sort()).toEqual([hashKey(token), hashKey(other)].sort());

    const body = { email: 'Owner@Example.com', name: 'First Owner', password: PASSWORD };
    const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { ...body, token: 'x'.repeat(43) } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toEqual({ error: 'Invalid setup token' });
    const weak = await t.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { ...body, token, password: 'short' } });
    expect(weak.statusCode).toBe(400);
    const crossSite = await t.app.inject({ method: 'POST', url: '/api/v1/auth/setup', headers: { 'sec-fetch-site': 'cross-site' }, payload: { ...body, token } });
    expect(crossSite.statusCode).toBe(403);

    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/setup', headers: SAME_ORIGIN, payload: { ...body, token } });
    expect(res.statusCode).toBe(201);
    expect(res.json().user).toMatchObject({ email: 'owner@example.com', name: 'First Owner', role: 'owner' });
    const cookie = `answerdesk_session=${sessionCookie(res.headers['set-cookie'])}`;
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).json().user.role).toBe('owner');
    expect(await t.deps.store.db.selectFrom('setup_tokens').selectAll().execute()).toEqual([]);

    // One time: neither token works again.
    for (const tk of [token, other]) {
      const again = await t.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { ...body, email: 'second@example.com', token: tk } });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({ error: 'Setup is already done' });
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/setup' })).json()).toEqual({ required: false });
    expect(await issueSetupToken(t.deps.store.db)).toBeNull();
  });

  it('invites a member with project roles through a one-time link', async () => {
    const p = await createProject(t, {}, 'Invited');
    const owner = await createUser(t.deps.store.db, { email: 'inviter@example.com', name: 'Inviter', role: 'owner', password: PASSWORD });
    const signIn = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: SAME_ORIGIN, payload: { email: owner.email, password: PASSWORD } });
    const headers = { ...SAME_ORIGIN, cookie: `answerdesk_session=${sessionCookie(signIn.headers['set-cookie'])}` };

    const unknownProject = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers, payload: { email: 'x@example.com', role: 'member', projects: [{ projectId: 'proj_nope', role: 'agent' }] } });
    expect(unknownProject.statusCode).toBe(404);
    const taken = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers, payload: { email: owner.email, role: 'member' } });
    expect(taken.statusCode).toBe(409);

    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites',
      headers,
      payload: { email: 'New.Agent@example.com', role: 'member', projects: [{ projectId: p.project.id, role: 'agent' }] },
    });
    expect(created.statusCode).toBe(201);
    const { invite, url } = created.json();
    expect(invite).toMatchObject({ email: 'new.agent@example.com', role: 'member', projects: [{ projectId: p.project.id, role: 'agent' }], createdBy: owner.id });
    expect(url).toMatch(/^\/dashboard\/invite\?token=[0-9A-Za-z]{43}$/);
    const token = new URL(url, 'http://x').searchParams.get('token')!;
    const row = await t.deps.store.db.selectFrom('invites').selectAll().where('id', '=', invite.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashKey(token));
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(7 * 24 * 3600 * 1000);

    const listed = await t.app.inject({ method: 'GET', url: '/api/v1/admin/invites', headers });
    expect(listed.json().invites.map((i: { id: string }) => i.id)).toContain(invite.id);
    expect(listed.body).not.toContain(token);

    const lookup = await t.app.inject({ method: 'GET', url: `/api/v1/auth/invite?token=${token}` });
    expect(lookup.json()).toEqual({ email: 'new.agent@example.com', role: 'member' });
    const accepted = await t.app.inject({ method: 'POST', url: '/api/v1/auth/invite', headers: SAME_ORIGIN, payload: { token, name: 'New Agent', password: PASSWORD } });
    expect(accepted.statusCode).toBe(201);
    const cookie = `answerdesk_session=${sessionCookie(accepted.headers['set-cookie'])}`;
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
    expect(me.json()).toMatchObject({ user: { email: 'new.agent@example.com', name: 'New Agent', role: 'member' }, memberships: [{ projectId: p.project.id, role: 'agent' }] });

    // Used once: the link is gone.
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/invite?token=${token}` })).statusCode).toBe(404);
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/auth/invite', payload: { token, name: 'Again', password: PASSWORD } });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: 'Invite not found or expired' });

    // A revoked invite stops working at once.
    const second = await t.app.inject({ method: 'POST', url: '/api/v1/admin/invites', headers: adminAuth(), payload: { email: 'later@example.com', role: 'owner' } });
    expect(second.statusCode).toBe(201);
    expect(second.json().invite.createdBy).toBeNull();
    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/invites/${second.json().invite.id}`, headers });
    expect(revoked.statusCode).toBe(204);
    const secondToken = new URL(second.json().url, 'http://x').searchParams.get('token')!;
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/invite?token=${secondToken}` })).statusCode).toBe(404);
  });

  it('refuses an invite that gives one project two roles, naming the project, and stores nothing', async () => {
    const p = await createProject(t, {}, 'Twice');
    const q = await createProject(t, {}, 'Once');
    const email = 'two.roles@example.com';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites',
      headers: adminAuth(),
      payload: {
        email,
        role: 'member',
        projects: [
          { projectId: p.project.id, role: 'agent' },
          { projectId: q.project.id, role: 'viewer' },
          { projectId: p.project.id, role: 'viewer' },
        ],
      },
    });
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { error: 'Validation error', details: [{ path: 'projects.2.projectId', message: `${p.project.id} is given more than once: give each project one role` }] },
    ]);
    expect(await t.deps.store.db.selectFrom('invites').selectAll().where('email', '=', email).execute()).toEqual([]);
    // The same role twice is refused too: it says nothing the first did not.
    const same = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/invites',
      headers: adminAuth(),
      payload: { email, role: 'member', projects: [{ projectId: q.project.id, role: 'agent' }, { projectId: q.project.id, role: 'agent' }] },
    });
    expect([same.statusCode, same.json().details]).toEqual([400, [{ path: 'projects.1.projectId', message: `${q.project.id} is given more than once: give each project one role` }]]);
  });

  it('keeps at least one owner', async () => {
    const owners = await t.deps.store.db.selectFrom('users').select('id').where('role', '=', 'owner').execute();
    // Leave exactly one owner, then try to demote and remove it.
    for (const o of owners.slice(1)) await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${o.id}`, headers: adminAuth() });
    const last = owners[0].id;
    const demote = await t.app.inject({ method: 'PATCH', url: `/api/v1/admin/users/${last}`, headers: adminAuth(), payload: { role: 'member' } });
    expect(demote.statusCode).toBe(409);
    const remove = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${last}`, headers: adminAuth() });
    expect(remove.statusCode).toBe(409);
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/admin/users/user_nope', headers: adminAuth() })).statusCode).toBe(404);
  });
});
