import type { Kysely } from 'kysely';
import { envelopeKeyId, type SecretBox, type SecretSealer } from '../lib/secret-box.js';
import type { Database } from '../store/index.js';

type Db = Kysely<Database>;

/**
 * A project's HMAC secret is stored sealed (the secret box, AES-256-GCM under ANSWERDESK_SECRET_KEY)
 * with the project's id as authenticated data: a ciphertext copied to another project's row does
 * not open, and a database dump alone cannot forge verified identities.
 */
export const hmacSecretContext = (projectId: string) => `project-hmac-secret:${projectId}`;

export function sealHmacSecret(box: SecretSealer, projectId: string, secret: string): string {
  return box.seal(secret, hmacSecretContext(projectId));
}

/**
 * The secret as stored, opened. A value that is no envelope was written in clear by an earlier
 * release and is read as it is until the next start seals it (`sealStoredHmacSecrets`). Throws
 * SecretKeyError, naming both key ids, on a node whose key did not seal it.
 */
export function openHmacSecret(box: SecretSealer, projectId: string, stored: string): string {
  return envelopeKeyId(stored) === null ? stored : box.open(stored, hmacSecretContext(projectId));
}

/**
 * The id of another key that sealed some project's HMAC secret, or null when every sealed secret
 * is this box's (or none is sealed yet). A process about to seal a secret asks first: one with the
 * wrong key would write values no node can open.
 */
export async function otherSealingKey(db: Db, box: Pick<SecretBox, 'keyId'>): Promise<string | null> {
  const row = await sealedByOtherKeys(db, box).select('hmac_secret').limit(1).executeTakeFirst();
  return row ? envelopeKeyId(row.hmac_secret) : null;
}

/** Whether some project's HMAC secret is sealed already (by any key). */
export async function anySealed(db: Db): Promise<boolean> {
  return (await db.selectFrom('projects').select('id').where('hmac_secret', 'like', 'v1.%').limit(1).executeTakeFirst()) !== undefined;
}

/** The projects whose HMAC secret was sealed with another key than the box's. */
const sealedByOtherKeys = (db: Db, box: Pick<SecretBox, 'keyId'>) =>
  db.selectFrom('projects').where('hmac_secret', 'like', 'v1.%').where('hmac_secret', 'not like', `v1.${box.keyId}.%`);

export interface HmacSealing {
  /** Rows that held their secret in clear and now hold it sealed. */
  sealed: number;
  /** Rows sealed with another key: this node cannot verify identities for those projects. */
  otherKey: number;
}

/**
 * Run at start: seals every HMAC secret still stored in clear. Idempotent, and safe with several
 * nodes starting at once: each row is replaced only if it still holds the clear value read (a
 * conditional update), so a row sealed or rotated meanwhile by another node is left alone. When
 * some secrets were sealed with another key, this node's key is probably the wrong one: nothing is
 * sealed then (the clear values keep verifying on the right nodes), and the count is returned for
 * the caller to report.
 */
export async function sealStoredHmacSecrets(db: Db, box: SecretBox): Promise<HmacSealing> {
  const { n } = await sealedByOtherKeys(db, box)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  const otherKey = Number(n);
  if (otherKey > 0) return { sealed: 0, otherKey };
  const clear = await db.selectFrom('projects').select(['id', 'hmac_secret']).where('hmac_secret', 'not like', 'v1.%').execute();
  let sealed = 0;
  for (const row of clear) {
    if (envelopeKeyId(row.hmac_secret) !== null) continue;
    const res = await db
      .updateTable('projects')
      .set({ hmac_secret: sealHmacSecret(box, row.id, row.hmac_secret) })
      .where('id', '=', row.id)
      .where('hmac_secret', '=', row.hmac_secret)
      .executeTakeFirst();
    sealed += Number(res.numUpdatedRows);
  }
  return { sealed, otherKey: 0 };
}
