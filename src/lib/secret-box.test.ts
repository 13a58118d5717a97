import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyDirectory, parseSecretKey, secretBox, SecretKeyError } from './secret-box.js';

describe('secret box (AES-256-GCM for secrets at rest)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'answerdesk-secret-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts 32 bytes as hex or base64, or a passphrase of 16+ characters', () => {
    const raw = randomBytes(32);
    expect(parseSecretKey(raw.toString('hex'))).toEqual(raw);
    expect(parseSecretKey(raw.toString('base64'))).toEqual(raw);
    expect(parseSecretKey('a long enough passphrase')).toHaveLength(32);
    expect(() => parseSecretKey('short')).toThrow(SecretKeyError);
  });

  it('seals with a fresh IV, opens only in the same context and with the same key', () => {
    const a = secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: 'first key of sixteen+ chars' });
    const b = secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: 'another key of sixteen+ chars' });
    const one = a.seal('Bearer xyz', 'ctx');
    expect(a.seal('Bearer xyz', 'ctx')).not.toBe(one);
    expect(one).not.toContain('xyz');
    expect(a.open(one, 'ctx')).toBe('Bearer xyz');
    expect(() => a.open(one, 'other ctx')).toThrow('failed its integrity check');
    expect(() => b.open(one, 'ctx')).toThrow(`encrypted with another key (key id ${a.keyId}`);
    const [v, id, iv, tag, data] = one.split('.');
    const flipped = Buffer.from(data!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => a.open([v, id, iv, tag, flipped.toString('base64url')].join('.'), 'ctx')).toThrow(SecretKeyError);
  });

  it('generates a key file (0600) beside the SQLite file on first use and reuses it', () => {
    const config = { DATABASE_URL: `sqlite:${join(dir, 'db', 'answerdesk.db')}`, ANSWERDESK_SECRET_KEY: undefined };
    expect(keyDirectory(config)).toBe(join(dir, 'db'));
    const first = secretBox(config);
    const file = join(dir, 'db', 'secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(parseSecretKey(readFileSync(file, 'utf8'))).toHaveLength(32);
    // Another process (a fresh config object) reads the same file.
    const second = secretBox({ ...config });
    expect(second).not.toBe(first);
    expect(second.open(first.seal('s3cret', 'c'), 'c')).toBe('s3cret');
    expect(first.origin).toBe('file');
  });

  it('uses ./data for PostgreSQL and a process key for an in-memory database', () => {
    expect(keyDirectory({ DATABASE_URL: 'postgres://db/answerdesk' })).toBe('./data');
    expect(secretBox({ DATABASE_URL: 'sqlite::memory:', ANSWERDESK_SECRET_KEY: undefined }).origin).toBe('memory');
  });
});
