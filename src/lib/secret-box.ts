import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the generated key lives when ANSWERDESK_SECRET_KEY is not set and the database is not a file. */
export const DEFAULT_DATA_DIR = './data';
export const KEY_FILE_NAME = 'secret.key';

const VERSION = 'v1';
// A fixed salt is fine here: the passphrase form exists for convenience; the random-key forms are preferred.
const PASSPHRASE_SALT = 'answerdesk/secret-key/v1';

export class SecretKeyError extends Error {}

/** What the box needs of the configuration (lib imports nothing of ours: the caller passes its config). */
export interface SecretKeyConfig {
  DATABASE_URL: string;
  ANSWERDESK_SECRET_KEY?: string | undefined;
}

/**
 * Encrypts small secrets at rest (action header values, webhook signing secrets, projects' HMAC
 * secrets) with AES-256-GCM. Each value gets a fresh 96-bit IV;
 * the envelope names the key (a short fingerprint) so that a node running with a different key
 * fails with a clear message instead of a bare authentication error. `context` is bound as
 * additional authenticated data, so a ciphertext copied to another action or header does not open.
 */
export interface SecretBox extends SecretSealer {
  readonly keyId: string;
  /** Where the key came from, for the start-up log line (never the key itself). */
  readonly origin: 'env' | 'file' | 'memory';
}

/** Seals and opens small secrets at rest: what the modules that store a secret need of the box. */
export interface SecretSealer {
  seal(plain: string, context: string): string;
  /** Throws SecretKeyError when the value was sealed with another key or altered. */
  open(envelope: string, context: string): string;
}

const ENVELOPE = /^v1\.([0-9a-f]{8})\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * The key id named by a sealed value, or null when the value is not an envelope (a value stored in
 * clear before it was sealed at rest).
 */
export function envelopeKeyId(value: string): string | null {
  return ENVELOPE.exec(value)?.[1] ?? null;
}

function fingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function box(key: Buffer, origin: SecretBox['origin']): SecretBox {
  const keyId = fingerprint(key);
  return {
    keyId,
    origin,
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, keyId, iv.toString('base64url'), tag.toString('base64url'), data.toString('base64url')].join('.');
    },
    open(envelope, context) {
      const [version, id, iv, tag, data] = envelope.split('.');
      if (version !== VERSION || !iv || !tag || data === undefined) throw new SecretKeyError('Unreadable encrypted value');
      if (id !== keyId) {
        throw new SecretKeyError(
          `A secret was encrypted with another key (key id ${id}, this node has ${keyId}); every node must use the same ANSWERDESK_SECRET_KEY`,
        );
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretKeyError('An encrypted value failed its integrity check');
      }
    },
  };
}

/**
 * The key from ANSWERDESK_SECRET_KEY: 32 bytes as 64 hex characters or base64 (`openssl rand
 * -base64 32`), or else a passphrase of at least 16 characters stretched with scrypt.
 */
export function parseSecretKey(value: string): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const raw = Buffer.from(trimmed, 'base64');
    if (raw.length === 32) return raw;
  }
  if (trimmed.length < 16) {
    throw new SecretKeyError('ANSWERDESK_SECRET_KEY must be 32 bytes (64 hex or base64 characters) or a passphrase of at least 16 characters');
  }
  return scryptSync(trimmed, PASSPHRASE_SALT, 32);
}

/**
 * The data directory that holds the generated key: beside the SQLite file, or `./data` for
 * PostgreSQL. Null for an in-memory SQLite database, whose data dies with the process anyway.
 */
export function keyDirectory(config: Pick<SecretKeyConfig, 'DATABASE_URL'>): string | null {
  const url = config.DATABASE_URL;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    return path === ':memory:' ? null : dirname(path);
  }
  return DEFAULT_DATA_DIR;
}

/** Reads the key file, or creates it (mode 0600) when absent; two processes racing agree on one file. */
function loadOrCreateKeyFile(path: string): Buffer {
  try {
    return parseSecretKey(readFileSync(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseSecretKey(readFileSync(path, 'utf8'));
}

const boxes = new WeakMap<object, SecretBox>();

/**
 * The secret box for this configuration, resolved once per config object: ANSWERDESK_SECRET_KEY,
 * else `secret.key` in the data directory (generated on first use), else (in-memory database) a
 * key that lives as long as the process.
 */
export function secretBox(config: SecretKeyConfig): SecretBox {
  const cached = boxes.get(config);
  if (cached) return cached;
  let made: SecretBox;
  if (config.ANSWERDESK_SECRET_KEY) {
    made = box(parseSecretKey(config.ANSWERDESK_SECRET_KEY), 'env');
  } else {
    const dir = keyDirectory(config);
    made = dir ? box(loadOrCreateKeyFile(join(dir, KEY_FILE_NAME)), 'file') : box(randomBytes(32), 'memory');
  }
  boxes.set(config, made);
  return made;
}

/**
 * Resolves the key at start-up, so that a bad ANSWERDESK_SECRET_KEY stops the server at once and the
 * key file exists from the first start (ready to be backed up with the database). Warns when a
 * PostgreSQL deployment relies on a local key file: every node must share one key.
 */
export function prepareSecretKey(
  config: SecretKeyConfig,
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
): SecretBox {
  const made = secretBox(config);
  const dir = keyDirectory(config);
  const file = dir ? join(dir, KEY_FILE_NAME) : null;
  log.info({ keyId: made.keyId, origin: made.origin, ...(made.origin === 'file' ? { file } : {}) }, 'secret key for stored secrets ready');
  if (made.origin === 'file' && !config.DATABASE_URL.startsWith('sqlite:')) {
    log.warn({ file }, 'PostgreSQL with a key file: set ANSWERDESK_SECRET_KEY to the same value on every node');
  }
  return made;
}
