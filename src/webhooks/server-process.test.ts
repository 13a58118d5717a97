import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/fakes/webhook-receiver.js';
import { adminAuth, auth, dialects, testSecretBox } from '../../test/helper.js';
import { SERVER_SECRET_KEY, serverDatabase, startServerProcess } from '../../test/server-process.js';
import { waitFor } from '../../test/wait.js';
import { createProject } from '../projects/projects.js';
import type { Store } from '../store/index.js';

// Each server is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('webhooks in the server process on $name', { timeout: 120_000 }, (dialect) => {
  let dir: string;
  let db: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-hooks-server-'));
    db = await serverDatabase(dialect, dir, 't_hooks');
    store = db.store;
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await store.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the delivery worker; a shutdown mid-attempt gives the delivery back and the restarted server sends it', async () => {
    const p = await createProject(store.db, testSecretBox(SERVER_SECRET_KEY), { name: 'Shop' });
    const env = { DATABASE_URL: db.url, ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' };
    let server = await startServerProcess(env);
    try {
      const created = await fetch(`${server.base}/api/v1/admin/projects/${p.project.id}/webhooks`, {
        method: 'POST',
        headers: { ...adminAuth(), 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.base}/hooks`, events: ['conversation.created'] }),
      });
      expect(created.status).toBe(201);
      const { webhook, secret } = (await created.json()) as { webhook: { id: string }; secret: string };
      expect(server.output().stdout).not.toContain(secret.slice(6));

      receiver.script('hang');
      const conv = await fetch(`${server.base}/api/v1/chat/conversations`, { method: 'POST', headers: auth(p.publicKey) });
      expect(conv.status).toBe(201);
      // The first attempt is in flight and the receiver holds it.
      await waitFor(() => receiver.received.length === 1, 20_000, 'first attempt');

      expect(await server.stop('SIGTERM', 20_000)).toBe(0);
      const given = await store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', webhook.id).executeTakeFirstOrThrow();
      expect(given).toMatchObject({ status: 'pending', attempts: 0, lease_owner: null, lease_until: null });

      server = await startServerProcess(env);
      const delivered = await waitFor(
        async () => {
          const row = await store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', webhook.id).executeTakeFirstOrThrow();
          return row.status === 'delivered' ? row : null;
        },
        30_000,
        'delivery after the restart',
      );
      expect(delivered).toMatchObject({ attempts: 1, response_status: 204 });
      expect(receiver.received).toHaveLength(2);
      const [first, second] = receiver.received;
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      const body = new StandardWebhook(secret).verify(second!.body, second!.headers as Record<string, string>) as { type: string };
      expect(body.type).toBe('conversation.created');
      // Neither the secret nor the body's content reached the log.
      const { stdout, stderr } = server.output();
      expect(stdout + stderr).not.toContain(secret.slice(6));
    } finally {
      await server.stop();
    }
  });
});
