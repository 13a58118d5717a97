import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/fakes/webhook-receiver.js';
import { dialects, testSecretBox } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import { createProject } from '../projects/projects.js';

const SECRET_KEY = 'cli-webhook-secret-key-0123456789abcdef';

// Each command is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('answerdesk webhook (CLI) on $name', { timeout: 240_000 }, (dialect) => {
  let db: CliDatabase;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await openCliDatabase(dialect);
    receiver = await startWebhookReceiver();
    // The receiver is on 127.0.0.1: allowed here, as on a trusted network.
    env = { ...db.env, ANSWERDESK_SECRET_KEY: SECRET_KEY, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' };
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.close();
  });

  it('adds an endpoint with its secret shown once, lists it without secrets, sends a signed test event, deletes it', async () => {
    const projectId = (await createProject(db.store.db, testSecretBox(SECRET_KEY), { name: 'Hooks' })).project.id;
    const url = `${receiver.base}/hooks?token=receiver-token-42`;

    const added = await runCli(['webhook', 'add', '--project', projectId, '--url', url, '--events', 'message.created, conversation.closed', '--json'], env);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { webhook, secret } = JSON.parse(added.stdout) as { webhook: { id: string; url: string; events: string[]; enabled: boolean }; secret: string };
    expect(webhook).toMatchObject({ url, events: ['message.created', 'conversation.closed'], enabled: true });
    expect(secret).toMatch(/^whsec_/);
    // Stored sealed: the secret is nowhere in the row.
    const row = await db.store.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));

    // Without --json: the secret once, with what it is for.
    const plain = await runCli(['webhook', 'add', '--project', projectId, '--url', `${receiver.base}/all`], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^Created webhook wh_\w+ for http:\/\/127\.0\.0\.1:\d+\/all \(events: all\)\.\nSigning secret, shown only now: .*\nwhsec_\S+\n$/);

    const listed = await runCli(['webhook', 'list', '--project', projectId], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+ENABLED\s+EVENTS\s+URL$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${webhook.id}\\s+yes\\s+message\\.created,conversation\\.closed\\s+${url.replace(/[.?]/g, '\\$&')}$`, 'm'));
    expect(listed.stdout).toMatch(/\s+yes\s+all\s+http:\/\/127\.0\.0\.1:\d+\/all$/m);
    const listedJson = await runCli(['webhook', 'list', '--project', projectId, '--json'], env);
    expect(JSON.parse(listedJson.stdout).webhooks).toHaveLength(2);
    for (const out of [listed.stdout, listedJson.stdout]) {
      expect(out).not.toContain('whsec_');
      expect(out).not.toContain(secret.slice('whsec_'.length));
    }

    // test: a real signed POST to the receiver, verified with the standardwebhooks library and the secret add printed.
    const tested = await runCli(['webhook', 'test', '--project', projectId, webhook.id], env);
    expect(tested.stderr).toBe('');
    expect(tested.code).toBe(0);
    expect(tested.stdout).toMatch(new RegExp(`^Delivered webhook\\.test to ${webhook.id}: HTTP 204 in \\d+ ms\\.\\n$`));
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.path).toBe('/hooks?token=receiver-token-42');
    const event = new StandardWebhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: { webhookId: string } };
    expect(event).toMatchObject({ type: 'webhook.test', data: { webhookId: webhook.id } });

    // A receiver that fails: exit 1 with the reason; the delivery stays for the server's retries.
    receiver.script({ status: 503 });
    const failed = await runCli(['webhook', 'test', '--project', projectId, webhook.id, '--json'], env);
    expect(failed.code).toBe(1);
    const delivery = JSON.parse(failed.stdout).delivery as { status: string; responseStatus: number; error: string; nextAttemptAt: string | null };
    expect(delivery).toMatchObject({ status: 'pending', responseStatus: 503, error: 'HTTP 503' });
    expect(delivery.nextAttemptAt).not.toBeNull();

    const deleted = await runCli(['webhook', 'delete', '--project', projectId, webhook.id], env);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`Deleted webhook ${webhook.id}.\n`);
    expect(await db.store.db.selectFrom('webhook_endpoints').select('id').where('id', '=', webhook.id).execute()).toEqual([]);
    expect(await db.store.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', webhook.id).execute()).toEqual([]);
    const again = await runCli(['webhook', 'delete', '--project', projectId, webhook.id], env);
    expect([again.code, again.stderr]).toEqual([1, 'Error: Webhook not found\n']);
  });

  it('refuses what the admin API refuses: private addresses (SSRF guard), bad URLs and event types, unknown projects', async () => {
    const projectId = (await createProject(db.store.db, testSecretBox(SECRET_KEY), { name: 'Guarded' })).project.id;
    const strict = { ...db.env, ANSWERDESK_SECRET_KEY: SECRET_KEY };
    for (const url of ['http://127.0.0.1:9/hooks', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://10.0.0.5/hooks', 'http://localhost:9/hooks', 'http://hooks.localhost/x']) {
      const res = await runCli(['webhook', 'add', '--project', projectId, '--url', url], strict);
      expect(res.code, url).toBe(2);
      expect(res.stderr.split('\n\nUsage:')[0], url).toBe('Error: Validation error\n  url: must not point at a private, loopback or link-local address');
    }
    const ftp = await runCli(['webhook', 'add', '--project', projectId, '--url', 'ftp://example.com/hooks'], strict);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toMatch(/^Error: Validation error\n {2}url: .*http/i);

    const badEvent = await runCli(['webhook', 'add', '--project', projectId, '--url', 'https://example.com/hooks', '--events', 'message.created,order.shipped'], strict);
    expect(badEvent.code).toBe(2);
    expect(badEvent.stderr).toMatch(/^Error: Invalid options:\n {2}events\.1: /);

    const missing = await runCli(['webhook', 'add', '--project', projectId], strict);
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, 'Error: Missing --url']);
    const unknown = await runCli(['webhook', 'list', '--project', 'prj_nope'], strict);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'Error: Project not found\n']);
    const noHook = await runCli(['webhook', 'test', '--project', projectId, 'wh_nope'], strict);
    expect([noHook.code, noHook.stderr]).toEqual([1, 'Error: Webhook not found\n']);

    // Nothing was stored by the refused commands.
    expect(await db.store.db.selectFrom('webhook_endpoints').select('id').where('project_id', '=', projectId).execute()).toEqual([]);
    const empty = await runCli(['webhook', 'list', '--project', projectId], strict);
    expect(empty.stdout).toBe('No webhooks.\n');
  });
});
