import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { listProjects } from '../api/projects/service.js';
import { base62 } from '../lib/ids.js';
import { hashKey } from '../lib/keys.js';
import { openStore, type Store } from '../store/index.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/answerdesk.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a child process, as a user would. */
async function runCli(args: string[], env: Record<string, string>): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// Each command starts a Node process that compiles TypeScript on the fly: allow for a busy machine.
const SLOW = { timeout: 180_000 };

describe.each(dialects)('answerdesk CLI on $name', SLOW, (dialect) => {
  let databaseUrl: string;
  let store: Store;
  let t: TestApp;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (dialect.name === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'answerdesk-cli-'));
      databaseUrl = `sqlite:${join(dir, 'cli.db')}`;
      store = await openStore(databaseUrl);
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      // The CLI gets its own schema through libpq's `options` parameter, which pg passes on.
      const schema = `t_cli_${base62(10).toLowerCase()}`;
      store = await openStore(dialect.url, { schema });
      databaseUrl = `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      cleanup = async () => {
        const client = new pg.Client({ connectionString: dialect.url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      };
    }
    // The app over the same database: keys printed by the CLI must work against the API.
    t = await createTestApp({ dialect, store });
  });
  afterAll(async () => {
    await t.close();
    await store.close();
    await cleanup();
  });

  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { DATABASE_URL: databaseUrl, ...env });

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
    expect(row).toMatchObject({ name: 'CLI Shop', hmac_secret: hmacSecret });
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

  it('exits 1 with a clear message when the command fails', async () => {
    const project = (await listProjects(store.db))[0];
    const unknownProject = await cli(['key', 'list', '--project', 'proj_missing']);
    expect(unknownProject).toMatchObject({ code: 1, stdout: '' });
    expect(unknownProject.stderr).toBe('Error: Project not found\n');
    const unknownKey = await cli(['key', 'revoke', '--project', project.id, 'key_missing']);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toBe('Error: Key not found\n');
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

  it('prints help with exit 0', async () => {
    const top = await runCli(['--help'], {});
    expect(top.code).toBe(0);
    for (const group of ['serve', 'project', 'key']) expect(top.stdout).toMatch(new RegExp(`^  ${group}\\s+\\S`, 'm'));
    const key = await runCli(['key', '--help'], {});
    expect(key.code).toBe(0);
    expect(key.stdout).toContain('answerdesk key revoke --project <projectId> <keyId>');
    const sub = await runCli(['project', 'create', '--help'], {});
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('answerdesk project create --name <name>');
  });
});
