import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing with scrypt, Node's own memory-hard KDF (no native add-on to build). The
 * parameters are OWASP's scrypt setting for 32 MiB of memory: N = 2^15, r = 8, p = 3 (see
 * docs/decisions.md). They are written into each hash, so raising them later still verifies old
 * hashes (and `needsRehash` says when to rewrite one).
 */
export const SCRYPT = { log2N: 15, r: 8, p: 3, keyLength: 32, saltLength: 16 } as const;

/** Passwords longer than this are refused before hashing: the KDF's cost must not be the caller's to choose. */
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // 128·N·r bytes per lane; the default cap (32 MiB) is too tight for N = 2^15, r = 8.
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 256 * 2 ** log2N * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$<log2N>$<r>$<p>$<salt>$<hash>`, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const key = await derive(password, salt, SCRYPT.log2N, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return ['scrypt', SCRYPT.log2N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Whether `password` matches `stored`; a malformed stored hash never matches. Constant-time compare. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [log2N, r, p] = parts.slice(1, 4).map(Number);
  if (![log2N, r, p].every((n) => Number.isInteger(n) && n > 0) || log2N > 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  if (expected.length < 16) return false;
  const key = await derive(password, salt, log2N, r, p, expected.length);
  return timingSafeEqual(key, expected);
}

/**
 * A hash that no password matches, with the current parameters. Verifying against it costs what
 * verifying a real password costs, so an unknown e-mail answers in the same time as a wrong password.
 */
export const UNMATCHABLE_HASH = ['scrypt', SCRYPT.log2N, SCRYPT.r, SCRYPT.p, Buffer.alloc(SCRYPT.saltLength).toString('base64'), Buffer.alloc(SCRYPT.keyLength).toString('base64')].join('$');
