import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startActionEndpoint, type ActionEndpoint } from '../../test/fakes/action-endpoint.js';
import { dialects } from '../../test/helper.js';
import { base62 } from '../lib/ids.js';
import { secretBox } from '../lib/secret-box.js';
import { createProject } from '../projects/projects.js';
import { openStore, type Store } from '../store/index.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/answerdesk.js');
const API_KEY = 'cli-configured-key-93b1d0';

async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// Each command is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('answerdesk action (CLI) on $name', { timeout: 180_000 }, (dialect) => {
  let dir: string;
  let databaseUrl: string;
  let store: Store;
  let ep: ActionEndpoint;
  let env: Record<string, string>;
  let projectId: string;
  let dropSchema = async () => {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-action-cli-'));
    ep = await startActionEndpoint();
    if (dialect.name === 'sqlite') {
      // No ANSWERDESK_SECRET_KEY: the key is generated beside the database file.
      databaseUrl = `sqlite:${join(dir, 'cli.db')}`;
      store = await openStore(databaseUrl);
      env = { DATABASE_URL: databaseUrl, DATABASE_CONNECT_TIMEOUT_MS: '30000' };
    } else {
      const schema = `t_cli_${base62(10).toLowerCase()}`;
      store = await openStore(dialect.url, { schema });
      databaseUrl = `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      env = { DATABASE_URL: databaseUrl, DATABASE_CONNECT_TIMEOUT_MS: '30000', ANSWERDESK_SECRET_KEY: 'cli-test-secret-key-0123456789abcdef' };
      dropSchema = async () => {
        const client = new pg.Client({ connectionString: dialect.url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      };
    }
  });
  afterAll(async () => {
    await store.close();
    await ep.close();
    await dropSchema();
    rmSync(dir, { recursive: true, force: true });
  });
  // Each test its own project.
  beforeEach(async () => {
    // Sealed with the key the CLI finds (the key file beside the SQLite database, or ANSWERDESK_SECRET_KEY), as a server's would be.
    projectId = (await createProject(store.db, secretBox({ DATABASE_URL: databaseUrl, ANSWERDESK_SECRET_KEY: env.ANSWERDESK_SECRET_KEY }), { name: 'CLI actions' })).project.id;
  });

  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });

  it('adds, lists, tests and deletes an action; the secret stays masked and encrypted', async () => {
    const file = join(dir, 'action.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'track_order',
        description: 'Look up an order',
        url: `${ep.base}/orders/{orderNumber}`,
        headers: { 'X-Api-Key': API_KEY },
        parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
      }),
    );
    // With the guard on, a loopback URL is refused as the admin API refuses it; allowed on a trusted network.
    const refused = await cli(['action', 'add', '--project', projectId, '--file', file]);
    expect([refused.code, refused.stderr.split('\n').slice(0, 2)]).toEqual([2, ['Error: Validation error', '  url: must not point at a private, loopback or link-local address']]);
    expect(await store.db.selectFrom('actions').select('id').where('project_id', '=', projectId).execute()).toEqual([]);
    const added = await cli(['action', 'add', '--project', projectId, '--file', file, '--json'], { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { action } = JSON.parse(added.stdout);
    expect(action).toMatchObject({ name: 'track_order', headers: { 'X-Api-Key': { value: '********', secret: true } } });
    const row = await store.db.selectFrom('actions').selectAll().where('id', '=', action.id).executeTakeFirstOrThrow();
    expect(row.headers).not.toContain(API_KEY);
    if (dialect.name === 'sqlite') expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);

    const listed = await cli(['action', 'list', '--project', projectId]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${action.id}\\s+track_order\\s+yes\\s+GET\\s+${ep.base}/orders/\\{orderNumber\\}$`, 'm'));

    // A second process opens the secret with the same key and sends it; the output masks it.
    const tested = await cli(['action', 'test', '--project', projectId, 'track_order', '--args', '{"orderNumber":"A-1234"}'], { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' });
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain(`> GET ${ep.base}/orders/A-1234`);
    expect(tested.stdout).toContain('> x-api-key: ********');
    expect(tested.stdout).toMatch(/^< 200 \(\d+ ms\)$/m);
    expect(tested.stdout).toContain('"status": "shipped"');
    expect(tested.stdout).not.toContain(API_KEY);
    expect(ep.receivedAt('/orders/A-1234').at(-1)!.headers['x-api-key']).toBe(API_KEY);

    const guarded = await cli(['action', 'test', '--project', projectId, action.id, '--args', '{"orderNumber":"A-1"}']);
    expect(guarded.code).toBe(1);
    expect(guarded.stdout).toContain('Failed: Refused: the endpoint (or a redirect) points to a private or reserved address');

    const deleted = await cli(['action', 'delete', '--project', projectId, 'track_order']);
    expect(deleted.code).toBe(0);
    expect(await store.db.selectFrom('actions').select('id').where('id', '=', action.id).execute()).toEqual([]);
  });

  it('reads an action file saved with a UTF-8 byte order mark, as eval case files are read', async () => {
    const file = join(dir, 'bom.json');
    const definition = { name: 'bom_order', description: 'Look up an order', url: 'https://shop.example.com/orders/{id}', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } };
    writeFileSync(file, `\uFEFF${JSON.stringify(definition, null, 2)}\r\n`);
    const added = await cli(['action', 'add', '--project', projectId, '--file', file, '--json']);
    expect([added.code, added.stderr]).toEqual([0, '']);
    expect(JSON.parse(added.stdout).action).toMatchObject({ name: 'bom_order', url: 'https://shop.example.com/orders/{id}' });
    const row = await store.db.selectFrom('actions').select(['name', 'url']).where('project_id', '=', projectId).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'bom_order', url: 'https://shop.example.com/orders/{id}' });
  });

  it('reports every problem of a bad definition at once, with exit code 2 and the usage', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'bad one', description: 'x', method: 'FETCH', url: 'https://example.com/orders/{id}', parameters: { type: 'string' }, colour: 'red' }),
    );
    const res = await cli(['action', 'add', '--project', projectId, '--file', file]);
    expect(res.code).toBe(2);
    // The shape errors and the cross-field ones together, so one edit fixes the file.
    expect(res.stderr.split('\n\nUsage:')[0]!.split('\n')).toEqual([
      'Error: Validation error',
      expect.stringMatching(/^ {2}name: must start with a letter/),
      expect.stringMatching(/^ {2}method: /),
      expect.stringMatching(/^ {2}\(body\): Unrecognized key: "colour"$/),
    ]);
    // With the method right, the checks that need it run too.
    writeFileSync(file, JSON.stringify({ name: 'bad one', description: 'x', url: 'https://example.com/orders/{id}', parameters: { type: 'string' } }));
    const all = await cli(['action', 'add', '--project', projectId, '--file', file]);
    expect(all.stderr).toContain('  name: must start with a letter');
    expect(all.stderr).toContain('  parameters.type: must be "object"');
    expect(all.stderr).toContain('  url: placeholder {id} is not a property in parameters');
    const semantic = join(dir, 'semantic.json');
    writeFileSync(semantic, JSON.stringify({ name: 'ok_name', description: 'x', url: 'https://example.com', parameters: { type: 'string' } }));
    const res2 = await cli(['action', 'add', '--project', projectId, '--file', semantic]);
    expect(res2.code).toBe(2);
    expect(res2.stderr).toMatch(/\n\nUsage:/);
    // Not JSON at all: a malformed value too.
    writeFileSync(semantic, '{"name": ');
    const notJson = await cli(['action', 'add', '--project', projectId, '--file', semantic]);
    expect([notJson.code, notJson.stderr.split('\n')[0]]).toEqual([2, `Error: file ${semantic} is not valid JSON: Unexpected end of JSON input`]);
    expect(res2.stderr).toContain('  parameters.type: must be "object"');
    const usage = await cli(['action', 'add', '--project', projectId]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Missing --file');
  });
});
