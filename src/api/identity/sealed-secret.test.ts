import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createTestApp, dialects, testSecretBox, type TestApp } from '../../../test/helper.js';
import { signHs256 } from '../../../test/identity.js';
import { SERVER_SECRET_KEY, serverDatabase, startServerProcess, type ServerProcess } from '../../../test/server-process.js';
import { signUserId } from '../../lib/keys.js';
import { secretBox } from '../../lib/secret-box.js';
import { hmacSecretContext } from '../../projects/hmac-secret.js';
import { createProject } from '../../projects/projects.js';
import { sealHmacSecrets } from '../../server.js';
import type { Store } from '../../store/index.js';

/**
 * A project's HMAC secret signs verified identities: whoever holds it can speak for any end user. It
 * is stored sealed (AES-256-GCM under ANSWERDESK_SECRET_KEY, bound to the project), so a database
 * dump or backup alone cannot forge identities; it is shown once, where it is made.
 */

const OTHER_KEY = 'another-secret-key-0123456789abcdef';

type Db = TestApp['deps']['store']['db'];
const storedSecret = async (db: Db, projectId: string) =>
  (await db.selectFrom('projects').select('hmac_secret').where('id', '=', projectId).executeTakeFirstOrThrow()).hmac_secret;
/** Puts a secret back in clear, as a release before sealing wrote it. */
const storeInClear = (db: Db, projectId: string, secret: string) =>
  db.updateTable('projects').set({ hmac_secret: secret }).where('id', '=', projectId).execute();

describe.each(dialects)('HMAC secrets sealed at rest on $name', (dialect) => {
  let t: TestApp;
  let other: TestApp;
  const logs: string[] = [];
  const otherLogs: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ dialect, logger: { level: 'info', stream: { write: (line: string) => logs.push(line) } } });
    // A second node over the same database, started with another ANSWERDESK_SECRET_KEY.
    other = await createTestApp({
      dialect,
      store: t.deps.store,
      env: { ANSWERDESK_SECRET_KEY: OTHER_KEY },
      logger: { level: 'info', stream: { write: (line: string) => otherLogs.push(line) } },
    });
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  const create = async (settings: object = {}) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/projects', headers: adminAuth(), payload: { name: 'Sealed', settings } });
    expect(res.statusCode).toBe(201);
    return res.json() as { project: { id: string }; publicKey: string; secretKey: string; hmacSecret: string };
  };
  const verify = (app: TestApp, key: string, secret: string, userId = 'user-1') =>
    app.app.inject({ method: 'POST', url: '/api/v1/identity/verify', headers: auth(key), payload: { userId, hmac: signUserId(secret, userId) } });
  const identify = (app: TestApp, key: string, secret: string, sub = 'user-2') =>
    app.app.inject({ method: 'POST', url: '/api/v1/identity/identify', headers: auth(key), payload: { token: signHs256(secret, { sub }) } });
  /** Every way a secret proves an identity: /identity/verify, /identity/identify, and the x-user-hmac / x-user-token headers. */
  async function expectVerifies(key: string, secret: string) {
    expect((await verify(t, key, secret)).json()).toEqual({ verified: true });
    expect((await identify(t, key, secret)).json()).toMatchObject({ verified: true, user: { id: 'user-2' } });
    for (const header of <Array<Record<string, string>>>[{ 'x-user-hmac': signUserId(secret, 'user-3') }, { 'x-user-token': signHs256(secret, { sub: 'user-3' }) }]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations?userId=user-3', headers: auth(key, header) });
      expect(res.statusCode).toBe(200);
    }
  }

  it('stores the secret of a new project sealed, and the secret shown at creation verifies', async () => {
    const p = await create({ identityVerification: 'required' });
    expect(p.hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
    const stored = await storedSecret(t.deps.store.db, p.project.id);
    expect(stored).not.toContain('ad_hs_');
    expect(stored).not.toContain(p.hmacSecret.slice(6));
    // Bound to its project: copied to another project's row, it does not open there.
    expect(secretBox(t.config).open(stored, hmacSecretContext(p.project.id))).toBe(p.hmacSecret);
    expect(() => secretBox(t.config).open(stored, hmacSecretContext('proj_other'))).toThrow('integrity check');
    await expectVerifies(p.publicKey, p.hmacSecret);
    expect(logs.join('')).not.toContain(p.hmacSecret);
  });

  it('stores a rotated secret sealed; the new one verifies, the old one no longer does', async () => {
    const p = await create({ identityVerification: 'required' });
    const before = await storedSecret(t.deps.store.db, p.project.id);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/hmac-secret/rotate`, headers: auth(p.secretKey) });
    expect(res.statusCode).toBe(200);
    const { hmacSecret } = res.json() as { hmacSecret: string };
    expect(hmacSecret).toMatch(/^ad_hs_[0-9A-Za-z]{40}$/);
    const stored = await storedSecret(t.deps.store.db, p.project.id);
    expect(stored).not.toBe(before);
    expect(stored).not.toContain('ad_hs_');
    expect(secretBox(t.config).open(stored, hmacSecretContext(p.project.id))).toBe(hmacSecret);
    await expectVerifies(p.publicKey, hmacSecret);
    expect((await verify(t, p.publicKey, p.hmacSecret)).json()).toEqual({ verified: false, error: 'Invalid HMAC signature' });
    expect(logs.join('')).not.toContain(hmacSecret);
  });

  it('keeps verifying a secret stored in clear, and seals it at start once, with two nodes starting at once', async () => {
    const p = await create({ identityVerification: 'required' });
    await storeInClear(t.deps.store.db, p.project.id, p.hmacSecret);
    await expectVerifies(p.publicKey, p.hmacSecret);

    const second = await createTestApp({ dialect, store: t.deps.store });
    try {
      const lines: string[] = [];
      const log = { info: (obj: object, msg: string) => lines.push(`${msg} ${JSON.stringify(obj)}`), error: (_obj: object, msg: string) => lines.push(msg) };
      await Promise.all([sealHmacSecrets(t.deps, secretBox(t.config), log), sealHmacSecrets(second.deps, secretBox(second.config), log)]);
      const stored = await storedSecret(t.deps.store.db, p.project.id);
      expect(stored).not.toContain('ad_hs_');
      expect(secretBox(t.config).open(stored, hmacSecretContext(p.project.id))).toBe(p.hmacSecret);
      expect(lines.filter((l) => l.startsWith('HMAC secrets stored in clear are now sealed'))).toHaveLength(1);
      await expectVerifies(p.publicKey, p.hmacSecret);

      // The next start finds nothing to seal and leaves the row as it is.
      await sealHmacSecrets(second.deps, secretBox(second.config), log);
      expect(await storedSecret(t.deps.store.db, p.project.id)).toBe(stored);
      expect(lines).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('on a node with another key, fails identity checks with the reason instead of rejecting the signature', async () => {
    const p = await create();
    otherLogs.length = 0;
    for (const res of [await verify(other, p.publicKey, p.hmacSecret), await identify(other, p.publicKey, p.hmacSecret)]) {
      expect(res.statusCode).toBe(500);
      expect(res.json()).not.toMatchObject({ error: expect.stringMatching(/^Invalid/) });
    }
    const header = await other.app.inject({
      method: 'GET',
      url: '/api/v1/chat/conversations?userId=user-3',
      headers: auth(p.publicKey, { 'x-user-hmac': signUserId(p.hmacSecret, 'user-3') }),
    });
    expect(header.statusCode).toBe(500);
    const reason = `A secret was encrypted with another key (key id ${secretBox(t.config).keyId}, this node has ${secretBox(other.config).keyId}); every node must use the same ANSWERDESK_SECRET_KEY`;
    expect(otherLogs.filter((l) => l.includes(reason))).toHaveLength(3);
    expect(otherLogs.join('')).not.toContain(p.hmacSecret);
    // What needs no identity still works there.
    expect((await other.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) })).statusCode).toBe(201);

    // Its start says so, and seals nothing with its key: a secret still in clear keeps verifying on the right nodes.
    const legacy = await create();
    await storeInClear(t.deps.store.db, legacy.project.id, legacy.hmacSecret);
    const lines: string[] = [];
    const log = { info: (_: object, msg: string) => lines.push(msg), error: (obj: object, msg: string) => lines.push(`${msg} ${JSON.stringify(obj)}`) };
    await sealHmacSecrets(other.deps, secretBox(other.config), log);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^HMAC secrets sealed with another key: this node cannot verify identities for those projects; every node must use the same ANSWERDESK_SECRET_KEY \{"projects":\d+/);
    expect(await storedSecret(t.deps.store.db, legacy.project.id)).toBe(legacy.hmacSecret);
    expect((await verify(t, legacy.publicKey, legacy.hmacSecret)).json()).toEqual({ verified: true });
  });
});

// An upgrade from a release that stored HMAC secrets in clear: the real server, two nodes at once.
describe.each(dialects)('upgrading a $name database with HMAC secrets in clear', { timeout: 180_000 }, (dialect) => {
  let dir: string;
  let db: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-hmac-'));
    db = await serverDatabase(dialect, dir, 't_hmac');
    store = db.store;
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const verify = (server: ServerProcess, key: string, secret: string) =>
    fetch(`${server.base}/api/v1/identity/verify`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'user-1', hmac: signUserId(secret, 'user-1') }),
    });

  it('seals them at start without losing one; a node with another key says why it cannot verify', async () => {
    const box = testSecretBox(SERVER_SECRET_KEY);
    const projects = [await createProject(store.db, box, { name: 'Old A' }), await createProject(store.db, box, { name: 'Old B' })];
    for (const p of projects) await storeInClear(store.db, p.project.id, p.hmacSecret);

    const nodes = await Promise.all([startServerProcess({ DATABASE_URL: db.url }), startServerProcess({ DATABASE_URL: db.url })]);
    try {
      for (const p of projects) {
        const stored = await storedSecret(store.db, p.project.id);
        expect(stored).not.toContain('ad_hs_');
        expect(box.open(stored, hmacSecretContext(p.project.id))).toBe(p.hmacSecret);
        for (const node of nodes) expect(await (await verify(node, p.publicKey, p.hmacSecret)).json()).toEqual({ verified: true });
      }
      // Each row was sealed once, by one node or the other.
      const sealed = nodes.flatMap((n) => n.logs()).filter((l) => l.msg === 'HMAC secrets stored in clear are now sealed');
      expect(sealed.reduce((sum, l) => sum + (l.projects as number), 0)).toBe(2);
      for (const node of nodes) expect(node.output().stdout).not.toContain(projects[0]!.hmacSecret);
    } finally {
      for (const node of nodes) expect(await node.stop()).toBe(0);
    }

    const wrong = await startServerProcess({ DATABASE_URL: db.url, ANSWERDESK_SECRET_KEY: OTHER_KEY });
    try {
      const said = await wrong.waitForLog(
        'HMAC secrets sealed with another key: this node cannot verify identities for those projects; every node must use the same ANSWERDESK_SECRET_KEY',
      );
      expect(said).toMatchObject({ level: 50, projects: 2 });
      const res = await verify(wrong, projects[0]!.publicKey, projects[0]!.hmacSecret);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain('Invalid HMAC signature');
      await wrong.waitForLog('unhandled error');
      expect(JSON.stringify(wrong.logs())).toContain('A secret was encrypted with another key');
    } finally {
      expect(await wrong.stop()).toBe(0);
    }
  });
});
