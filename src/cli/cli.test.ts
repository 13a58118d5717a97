import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createTestApp, dialects, TEST_SECRET_KEY, type TestApp } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import { base62 } from '../lib/ids.js';
import { hashKey, signUserId } from '../lib/keys.js';
import { secretBox } from '../lib/secret-box.js';
import { hmacSecretContext } from '../projects/hmac-secret.js';
import { createSource } from '../knowledge/sources.js';
import { createProject, listProjects } from '../projects/projects.js';
import type { Store } from '../store/index.js';


// Each command starts a Node process that compiles TypeScript on the fly: allow for a busy machine.
const SLOW = { timeout: 180_000 };

describe.each(dialects)('answerdesk CLI on $name', SLOW, (dialect) => {
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

  // A loaded CI machine (two test workers, each CLI run compiling TypeScript) can take longer than the
  // 5 s default to open a connection; what these tests check is the commands, not that default.
  // The CLI seals HMAC secrets with the key the app over the same database uses, as a deployment's would.
  const cli = (args: string[], env: Record<string, string> = {}, input?: string) =>
    runCli(args, { ANSWERDESK_SECRET_KEY: TEST_SECRET_KEY, ...db.env, ...env }, input);

  it('project create prints the id, both keys and the HMAC secret, and they are real', async () => {
    const res = await cli(['project', 'create', '--name', 'CLI Shop']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const field = (label: string) => new RegExp(`^\\s+${label}\\s+(\\S+)$`, 'm').exec(res.stdout)?.[1];
    const projectId = field('project id')!;
    const publicKey = field('public key')!;
    const secretKey = field('secret key')!;
    const hmacSecret = field('HMAC secret')!;
    expect(projectId).toMatch(/^proj_[0-9A-Za-z]{22}$/);
    expect(publicKey).toMatch(/^ad_pk_[0-9A-Za-z]{32}$/);
    expect(secretKey).toMatch(/^ad_sk_[0-9A-Za-z]{40}$/);
    expect(hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);

    const row = await store.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'CLI Shop' });
    // Sealed at rest: the row holds no secret a database dump could sign identities with.
    expect(row.hmac_secret).not.toContain('ad_hs_');
    expect(secretBox(t.config).open(row.hmac_secret, hmacSecretContext(projectId))).toBe(hmacSecret);
    const verified = await t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(publicKey), payload: { userId: 'u-0', hmac: signUserId(hmacSecret, 'u-0') } });
    expect(verified.json()).toEqual({ verified: true });
    const keys = await store.db.selectFrom('api_keys').select(['hash', 'kind']).where('project_id', '=', projectId).execute();
    expect(keys.map((k) => k.hash).sort()).toEqual([hashKey(publicKey), hashKey(secretKey)].sort());

    const runtime = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(publicKey) });
    expect(runtime.statusCode).toBe(201);
    const admin = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}`, headers: auth(secretKey) });
    expect(admin.statusCode).toBe(200);
  });

  it('project create --json prints the admin API shape and stores --settings', async () => {
    const res = await cli(['project', 'create', '--name', 'Json Co', '--json', '--settings', '{"conversationTtlMinutes":90,"allowedOrigins":["https://shop.example"]}']);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(Object.keys(body).sort()).toEqual(['hmacSecret', 'project', 'publicKey', 'secretKey']);
    expect(body.project).toMatchObject({ name: 'Json Co', settings: { conversationTtlMinutes: 90, allowedOrigins: ['https://shop.example'] } });
    const row = await store.db.selectFrom('projects').select('settings').where('id', '=', body.project.id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings)).toEqual({ conversationTtlMinutes: 90, allowedOrigins: ['https://shop.example'] });
  });

  it('project list prints every project, as a table or as JSON', async () => {
    const projects = await listProjects(store.db);
    expect(projects.length).toBeGreaterThanOrEqual(2);
    const table = await cli(['project', 'list']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREATED$/);
    expect(lines).toHaveLength(projects.length + 1);
    for (const p of projects) expect(table.stdout).toMatch(new RegExp(`^${p.id}\\s+${p.name}\\s+${p.createdAt}$`, 'm'));
    const json = await cli(['project', 'list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ projects });
  });

  it('project delete asks for --yes, then deletes the project with its knowledge sources and their jobs', async () => {
    const project = JSON.parse((await cli(['project', 'create', '--name', 'Short-lived', '--json'])).stdout).project;
    const source = await createSource(t.deps, project.id, { type: 'text', payload: 'A page about parcels.' });
    const refused = await cli(['project', 'delete', project.id]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('add --yes to go ahead');
    expect(await store.db.selectFrom('projects').select('id').where('id', '=', project.id).execute()).toHaveLength(1);

    const res = await cli(['project', 'delete', project.id, '--yes']);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`Deleted project ${project.id} and everything in it.\n`);
    expect(await store.db.selectFrom('projects').select('id').where('id', '=', project.id).execute()).toEqual([]);
    expect(await store.db.selectFrom('knowledge_sources').select('id').where('id', '=', source.id).execute()).toEqual([]);
    expect(await store.db.selectFrom('knowledge_jobs').select('id').where('project_id', '=', project.id).execute()).toEqual([]);
  });

  it('key create, list and revoke work on the stored rows, and a revoked key is refused', async () => {
    const project = JSON.parse((await cli(['project', 'create', '--name', 'Keyed', '--json'])).stdout).project;

    const made = await cli(['key', 'create', '--project', project.id, '--kind', 'secret', '--name', 'deploy bot', '--json']);
    expect(made.code).toBe(0);
    const { key, secret } = JSON.parse(made.stdout);
    expect(secret).toMatch(/^ad_sk_[0-9A-Za-z]{40}$/);
    expect(key).toMatchObject({ projectId: project.id, kind: 'secret', name: 'deploy bot', revokedAt: null });
    const row = await store.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.hash).toBe(hashKey(secret));

    const human = await cli(['key', 'create', '--project', project.id]);
    expect(human.code).toBe(0);
    const pub = /^\s+(ad_pk_[0-9A-Za-z]{32})$/m.exec(human.stdout)?.[1];
    expect(pub).toBeDefined();
    expect(human.stdout).toMatch(/^Created public key key_\w+ for project /);
    const works = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=u', headers: auth(pub!) });
    expect(works.statusCode).toBe(200);

    const list = await cli(['key', 'list', '--project', project.id]);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+KIND\s+NAME\s+KEY\s+LAST USED\s+REVOKED$/);
    expect(list.stdout).toContain(key.prefix);
    expect(list.stdout).toMatch(new RegExp(`^${key.id}\\s+secret\\s+deploy bot\\s+`, 'm'));
    expect(list.stdout).not.toContain(secret);
    const listJson = JSON.parse((await cli(['key', 'list', '--project', project.id, '--json'])).stdout);
    expect(listJson.keys).toHaveLength(4);

    const before = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers: auth(secret) });
    expect(before.statusCode).toBe(200);
    const revoked = await cli(['key', 'revoke', '--project', project.id, key.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked secret key ${key.id} `));
    const stored = await store.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(stored.revoked_at).toMatch(/Z$/);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects', headers: auth(secret) });
    expect(after.statusCode).toBe(401);
  });

  it('project show, update and rotate-hmac change the stored project as the admin API does', async () => {
    const created = JSON.parse((await cli(['project', 'create', '--name', 'Before', '--json', '--settings', '{"widget":{"primaryColor":"#111111","fabText":"Ask"}}'])).stdout);
    const id: string = created.project.id;

    // Settings merge one level deep, as PATCH /projects/{id} does.
    const updated = await cli(['project', 'update', id, '--name', 'After', '--settings', '{"widget":{"primaryColor":"#0f766e"},"conversationTtlMinutes":60}', '--json']);
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}`, headers: adminAuth() });
    expect(JSON.parse(updated.stdout)).toEqual(api.json());
    expect(api.json().project).toMatchObject({ name: 'After', settings: { widget: { primaryColor: '#0f766e', fabText: 'Ask' }, conversationTtlMinutes: 60 } });
    const shown = await cli(['project', 'show', id]);
    expect(shown.stdout).toMatch(new RegExp(`^Project "After" \\(${id}\\)`));
    expect(shown.stdout).toContain('"conversationTtlMinutes": 60');

    // Every problem at once, each with its path and no stray separator.
    const bad = await cli(['project', 'update', id, '--settings', '{"colour":"red","widget":{"size":1},"conversationTtlMinutes":0}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n\nUsage:')[0]!.split('\n').sort()).toEqual([
      'Error: Invalid --settings:',
      '  settings.conversationTtlMinutes: Too small: expected number to be >=1',
      '  settings.widget: Unrecognized key: "size"',
      '  settings: Unrecognized key: "colour"',
    ].sort());
    expect(bad.stderr).not.toMatch(/\.:/);

    // The new HMAC secret verifies end users; the old one no longer does.
    const rotated = await cli(['project', 'rotate-hmac', id, '--json']);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const { hmacSecret } = JSON.parse(rotated.stdout);
    expect(hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
    expect(hmacSecret).not.toBe(created.hmacSecret);
    const verify = (secret: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(created.publicKey), payload: { userId: 'u-1', hmac: signUserId(secret, 'u-1') } });
    expect((await verify(hmacSecret)).statusCode).toBe(200);
    expect((await verify(created.hmacSecret)).statusCode).toBe(401);
    const row = await store.db.selectFrom('projects').select('hmac_secret').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.hmac_secret).not.toContain('ad_hs_');
    expect(secretBox(t.config).open(row.hmac_secret, hmacSecretContext(id))).toBe(hmacSecret);
  });

  it('refuses to seal a secret with another key than the one the database’s secrets were sealed with, writing nothing', async () => {
    const made = await cli(['project', 'create', '--name', 'Sealed here', '--json']);
    expect(made.code).toBe(0);
    const { project, hmacSecret } = JSON.parse(made.stdout);
    // A CLI run without the server's key (another ANSWERDESK_SECRET_KEY, or none and another data directory).
    const elsewhere = { ANSWERDESK_SECRET_KEY: 'another-secret-key-0123456789abcdef' };
    const projects = (await listProjects(store.db)).length;
    const refusal = /^Error: The database's secrets were sealed with key [0-9a-f]{8}, and this command has key [0-9a-f]{8} \(from ANSWERDESK_SECRET_KEY\): nothing was written\./;
    for (const args of [
      ['project', 'create', '--name', 'Sealed elsewhere'],
      ['project', 'rotate-hmac', project.id],
      ['webhook', 'add', '--project', project.id, '--url', 'https://hooks.example.com/answerdesk'],
    ]) {
      const refused = await cli(args, elsewhere);
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr).toMatch(refusal);
      expect(refused.stdout).toBe('');
    }
    // With no key at all, it does not make a key file of its own beside the database either.
    if (dialect.name === 'sqlite') {
      const keyFile = join(dirname(db.env.DATABASE_URL!.slice('sqlite:'.length)), 'secret.key');
      const keyless = await cli(['project', 'create', '--name', 'Sealed nowhere'], { ANSWERDESK_SECRET_KEY: '' });
      expect(keyless.code).toBe(1);
      expect(keyless.stderr).toContain(`this command has no key: ANSWERDESK_SECRET_KEY is not set and there is no key file ${keyFile}. Nothing was written.`);
      expect(existsSync(keyFile)).toBe(false);
    }
    expect((await listProjects(store.db)).length).toBe(projects);
    expect(await store.db.selectFrom('webhook_endpoints').select('id').where('project_id', '=', project.id).execute()).toEqual([]);
    const row = await store.db.selectFrom('projects').select('hmac_secret').where('id', '=', project.id).executeTakeFirstOrThrow();
    expect(secretBox(t.config).open(row.hmac_secret, hmacSecretContext(project.id))).toBe(hmacSecret);
  });

  it('skill add, enable, update, list and delete: what the widget offers follows', async () => {
    const { project } = JSON.parse((await cli(['project', 'create', '--name', 'Skilled', '--json'])).stdout);
    const offered = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/projects/' + project.id + '/skills', headers: adminAuth() });
      return res.json().skills as Array<{ id: string; name: string; enabled: boolean; instructions: string }>;
    };
    // Read as a text editor on Windows saves it: the byte order mark is not part of the instructions.
    const added = await cli(['skill', 'add', '--project', project.id, '--name', 'Track an order', '--description', 'Where is my parcel?', '--instructions-file', '-', '--disabled', '--json'], {}, '\uFEFFAsk for the order number, then call track_order.');
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { skill } = JSON.parse(added.stdout);
    expect(await offered()).toEqual([skill]);
    expect(skill).toMatchObject({ name: 'Track an order', enabled: false, instructions: 'Ask for the order number, then call track_order.' });

    expect((await cli(['skill', 'enable', '--project', project.id, skill.id])).stdout).toBe(`Enabled skill ${skill.id} ("Track an order").\n`);
    const renamed = await cli(['skill', 'update', '--project', project.id, skill.id, '--name', 'Track a parcel']);
    expect(renamed.code).toBe(0);
    expect(await offered()).toEqual([expect.objectContaining({ id: skill.id, name: 'Track a parcel', enabled: true })]);
    const listed = await cli(['skill', 'list', '--project', project.id]);
    expect(listed.stdout).toMatch(new RegExp(`^${skill.id}\\s+Track a parcel\\s+yes\\s+Where is my parcel\\?$`, 'm'));
    // The verb already says it: no ", disabled" after "Disabled skill".
    expect((await cli(['skill', 'disable', '--project', project.id, skill.id])).stdout).toBe(`Disabled skill ${skill.id} ("Track a parcel").\n`);
    expect(await offered()).toEqual([expect.objectContaining({ id: skill.id, enabled: false })]);

    const empty = await cli(['skill', 'update', '--project', project.id, skill.id, '--name', ' ']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^Error: Invalid skill:\n {2}name: /);
    const removed = await cli(['skill', 'delete', '--project', project.id, skill.id]);
    expect(removed.code).toBe(0);
    expect(await offered()).toEqual([]);
  });

  it('conversation list, show and close, activity and analytics show what the runtime API stored', async () => {
    const created = JSON.parse((await cli(['project', 'create', '--name', 'Talkative', '--json'])).stdout);
    const id: string = created.project.id;
    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(created.publicKey), payload: { endUserExternalId: 'ada' } });
    const conversationId: string = conv.json().conversationId;
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(created.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Hello there!' }] },
    });
    expect(sent.statusCode).toBe(200);
    const adminGet = async (path: string) => (await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${id}${path}`, headers: adminAuth() })).json();

    const listed = await cli(['conversation', 'list', '--project', id, '--user', 'ada', '--status', 'active', '--json']);
    expect(listed.stderr).toBe('');
    expect(JSON.parse(listed.stdout)).toEqual(await adminGet('/conversations?userId=ada&status=ACTIVE'));
    expect(JSON.parse(listed.stdout).conversations.map((c: { id: string }) => c.id)).toEqual([conversationId]);

    const shown = await cli(['conversation', 'show', '--project', id, conversationId]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Conversation ${conversationId}: ACTIVE, 2 messages, ada, started `));
    expect(shown.stdout).toMatch(/^\[[^\]]+\] User msg_\w+\n {2}Hello there!$/m);
    expect(shown.stdout).toMatch(/^\[[^\]]+\] Agent msg_\w+\n {2}Hi! /m);

    const activity = await cli(['activity', '--project', id, '--json']);
    const feed = JSON.parse(activity.stdout);
    expect(feed.messages.map((m: { conversationId: string; role: string }) => [m.conversationId, m.role])).toEqual([
      [conversationId, 'user'],
      [conversationId, 'assistant'],
    ]);
    const analytics = await cli(['analytics', '--project', id, '--days', '7', '--json']);
    const { to: _cliTo, ...figures } = JSON.parse(analytics.stdout);
    const { to: _apiTo, ...apiFigures } = await adminGet('/analytics?days=7');
    expect(figures).toEqual(apiFigures);
    expect(figures.messages).toEqual({ total: 2, user: 1, assistant: 1, human: 0, failed: 0 });
    // The table shows the answers by outcome and their rates, as the API counts them.
    const table = await cli(['analytics', '--project', id, '--days', '7']);
    expect(table.code).toBe(0);
    const { answered, declined, action, error, answeredRate, declinedRate } = figures.outcomes;
    const pct = (r: number) => `${Math.round(r * 1000) / 10}%`;
    expect(table.stdout).toContain(
      `  answers        ${answered} answered, ${declined} declined, ${action} from actions, ${error} failed (answered ${pct(answeredRate)}, declined ${pct(declinedRate)})\n`,
    );

    const closed = await cli(['conversation', 'close', '--project', id, conversationId]);
    expect(closed.stdout).toMatch(new RegExp(`^Closed conversation ${conversationId} at \\d{4}-`));
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/messages',
      headers: auth(created.publicKey),
      payload: { conversationId, messages: [{ role: 'user', content: 'Still there?' }] },
    });
    expect(refused.json()).toEqual({ error: 'Conversation expired' });

    const badFilter = await cli(['conversation', 'list', '--project', id, '--status', 'sleeping', '--limit', '500']);
    expect(badFilter.code).toBe(2);
    expect(badFilter.stderr).toMatch(/^Error: Invalid options:\n {2}status: .*\n {2}limit: /);
  });

  if (dialect.name === 'postgres') {
    it('names the createdb command when the PostgreSQL database does not exist', async () => {
      const url = new URL(dialect.url);
      url.pathname = `/answerdesk_missing_${base62(8).toLowerCase()}`;
      const res = await cli(['project', 'list'], { DATABASE_URL: url.toString() });
      expect(res.code).toBe(1);
      const name = url.pathname.slice(1);
      expect(res.stderr).toContain(`PostgreSQL database "${name}" does not exist. Create it first, e.g.:\n  createdb -h ${url.hostname} -p ${url.port || '5432'}`);
      expect(res.stderr).toMatch(new RegExp(` ${name}\\n`));
    });
  }

  it('exits 2 with the usage for a value the admin API refuses with 400, also when only the database can judge it', async () => {
    const { project } = await createProject(store.db, secretBox(t.config), { name: 'Refusals' });
    const cases: Array<[string[], string[]]> = [
      [['conversation', 'list', '--project', project.id, '--cursor', 'abc'], ['Error: Validation error', '  cursor: Invalid cursor']],
      [['activity', '--project', project.id, '--after', 'junk'], ['Error: Validation error', '  after: Invalid cursor']],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args);
      expect([args.join(' '), res.code, res.stdout]).toEqual([args.join(' '), 2, '']);
      const [head, usage] = res.stderr.split('\n\n');
      expect(head!.split('\n')).toEqual(message);
      expect(usage).toMatch(/^Usage:/);
    }
  });

  it('exits 1 with a clear message when the command fails', async () => {
    const project = (await listProjects(store.db))[0];
    const unknownProject = await cli(['key', 'list', '--project', 'proj_missing']);
    expect(unknownProject).toMatchObject({ code: 1, stdout: '' });
    expect(unknownProject.stderr).toBe('Error: Project not found\n');
    const unknownKey = await cli(['key', 'revoke', '--project', project.id, 'key_missing']);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toBe('Error: Key not found\n');
    // A mistyped SQLite path would answer from an empty database as if it were the real one: said.
    const typo = join(mkdtempSync(join(tmpdir(), 'answerdesk-cli-typo-')), 'answerdsk.db');
    const fresh = await cli(['project', 'list'], { DATABASE_URL: `sqlite:${typo}` });
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toBe(`Note: there was no database at ${typo} (DATABASE_URL), so a new, empty one was created.\n`);
    expect((await cli(['project', 'list'], { DATABASE_URL: `sqlite:${typo}` })).stderr).toBe('');
    rmSync(dirname(typo), { recursive: true, force: true });
    const badConfig = await cli(['project', 'list'], { DATABASE_URL: 'mysql://nope' });
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toMatch(/Invalid configuration:\n\s+DATABASE_URL: must be "sqlite:<path>" or "postgres:\/\/…"/);
  });
});

describe('answerdesk CLI command line', SLOW, () => {
  const dir = mkdtempSync(join(tmpdir(), 'answerdesk-cli-usage-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 2 with the usage on a malformed command line', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['project', 'create'], /Missing --name/],
      [['project', 'create', '--name', 'x', '--colour', 'red'], /Unknown option '--colour'/],
      [['project', 'create', '--name', 'x', '--settings', '{"conversationTtlMinutes":0}'], /settings\.conversationTtlMinutes/],
      [['key', 'create'], /Missing --project/],
      [['key', 'create', '--project', 'proj_x', '--kind', 'root'], /--kind must be "public" or "secret"/],
      [['key', 'revoke', '--project', 'proj_x', 'a', 'b'], /Unexpected argument: b/],
      // What the command needs, named as the command line names it (not as a schema path).
      [['gaps', 'resolve', '--project', 'proj_x', 'gap_1'], /^Error: Missing --answer\n/],
      // An empty argument or value (an unset shell variable) names nothing.
      [['gaps', 'resolve', '--project', 'proj_x', '', '--answer', 'Yes.'], /^Error: Missing <gapId>\n/],
      [['webhook', 'test', '--project', 'proj_x', ' '], /^Error: Missing <webhookId>\n/],
      [['eval', 'run', '--project', 'proj_x', '--eval', ''], /^Error: Missing the value of --eval\n/],
      // Numbers are written in decimal: not hexadecimal, exponents or nothing.
      [['eval', 'run', '--project', 'proj_x', '--eval', 'eval_x', '--max-fabricated', '0x1'], /--max-fabricated must be a whole number/],
      [['eval', 'run', '--project', 'proj_x', '--eval', 'eval_x', '--min-hit3', '1e-1'], /--min-hit3 must be a number from 0 to 1/],
      [['eval', 'run', '--project', 'proj_x', '--eval', 'eval_x', '--min-mrr', ''], /--min-mrr must be a number from 0 to 1/],
      // Also where the admin route's own query schema reads the option.
      [['conversation', 'list', '--project', 'proj_x', '--limit', '0x10'], /^Error: Invalid options:\n {2}limit: must be a whole number written in decimal digits\n/],
      [['activity', '--project', 'proj_x', '--limit', '1e1'], /^Error: Invalid options:\n {2}limit: must be a whole number written in decimal digits\n/],
      [['analytics', '--project', 'proj_x', '--days', '0x1e'], /^Error: Invalid options:\n {2}days: must be a whole number written in decimal digits\n/],
      [['gaps', 'list', '--project', 'proj_x', '--days', ''], /^Error: Invalid options:\n {2}days: must be a whole number written in decimal digits\n/],
      // A value option given twice: the last would silently win (user add --project A --role agent --project B).
      [['user', 'add', '--email', 'a@example.com', '--project', 'proj_a', '--role', 'agent', '--project', 'proj_b'], /^Error: --project is given more than once\n/],
      [['conversation', 'list', '--project', 'proj_x', '--limit=5', '--limit', '5'], /^Error: --limit is given more than once\n/],
      // A file named as the command's input that cannot be read: a missing value.
      [['knowledge', 'add', '--project', 'proj_x', '/nonexistent/answerdesk/faq.md'], /^Error: Cannot read \/nonexistent\/answerdesk\/faq\.md: no such file or directory\n/],
      [['skill', 'add', '--project', 'proj_x', '--name', 'x', '--instructions-file', '/nonexistent/answerdesk/skill.md'], /^Error: Cannot read \/nonexistent\/answerdesk\/skill\.md: ENOENT/],
      [['action', 'add', '--project', 'proj_x', '--file', '/nonexistent/answerdesk/action.json'], /^Error: Cannot read file \/nonexistent\/answerdesk\/action\.json: ENOENT/],
      [['launch'], /Unknown command: launch/],
    ];
    for (const [args, message] of cases) {
      const res = await runCli(args, { DATABASE_URL: `sqlite:${join(dir, 'usage.db')}` });
      expect([args.join(' '), res.code]).toEqual([args.join(' '), 2]);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).toMatch(/Usage:/);
    }
    // Refused before the database was even opened.
    expect(existsSync(join(dir, 'usage.db'))).toBe(false);
  });

  it('serve names Redis when it cannot reach REDIS_URL at start', async () => {
    // A port nothing listens on: taken, then let go.
    const closed = createServer();
    await new Promise<void>((ready) => closed.listen(0, '127.0.0.1', ready));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const res = await runCli(['serve'], {
      DATABASE_URL: `sqlite:${join(dir, 'redis.db')}`,
      REDIS_URL: `redis://:secret-password@127.0.0.1:${port}`,
      PORT: '0',
      ANSWERDESK_DEMO: 'false',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`Error: Cannot connect to Redis at 127.0.0.1:${port} (connection refused). Is the server running, and is REDIS_URL right?\n`);
  });

  it('prints help with exit 0, also without any command (which starts no server)', async () => {
    // No command: the help, at once, and no database or port touched.
    const bare = await runCli([], { DATABASE_URL: `sqlite:${join(dir, 'bare.db')}`, PORT: '1' });
    expect(bare).toMatchObject({ code: 0, stderr: '' });
    expect(bare.stdout).toMatch(/^Usage: answerdesk <command> \[options\]/);
    expect(bare.stdout).toContain('"answerdesk serve" starts the server');
    expect(existsSync(join(dir, 'bare.db'))).toBe(false);
    const top = await runCli(['--help'], {});
    expect(top.code).toBe(0);
    expect(top.stdout).toBe(bare.stdout);
    for (const group of ['serve', 'project', 'key', 'knowledge', 'action', 'skill', 'conversation', 'activity', 'analytics']) {
      expect(top.stdout).toMatch(new RegExp(`^  ${group}\\s+\\S`, 'm'));
    }
    const key = await runCli(['key', '--help'], {});
    expect(key.code).toBe(0);
    expect(key.stdout).toContain('answerdesk key revoke --project <projectId> <keyId>');
    const sub = await runCli(['project', 'create', '--help'], {});
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('answerdesk project create --name <name>');
  });
});
