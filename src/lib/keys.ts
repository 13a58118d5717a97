import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { base62 } from './ids.js';

export type KeyKind = 'public' | 'secret';

export const PUBLIC_KEY_RE = /^ad_pk_[0-9A-Za-z]{32}$/;
export const SECRET_KEY_RE = /^ad_sk_[0-9A-Za-z]{40}$/;

export function generateApiKey(kind: KeyKind): string {
  return kind === 'public' ? `ad_pk_${base62(32)}` : `ad_sk_${base62(40)}`;
}

export function generateHmacSecret(): string {
  return `ad_hs_${base62(40)}`;
}

/** What is stored instead of the key: its SHA-256, hex. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Shown in lists so a person can tell keys apart: `ad_pk_AbCd…wxyz`. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, 10)}…${key.slice(-4)}`;
}

export function keyKind(key: string): KeyKind | null {
  if (PUBLIC_KEY_RE.test(key)) return 'public';
  if (SECRET_KEY_RE.test(key)) return 'secret';
  return null;
}

/** Hex HMAC-SHA256 of `userId`, the signature a customer's server hands to its web page. */
export function signUserId(secret: string, userId: string): string {
  return createHmac('sha256', secret).update(userId, 'utf8').digest('hex');
}

/** Constant-time check of a hex signature; upper- and lower-case hex are both accepted. */
export function verifyUserHmac(secret: string, userId: string, signature: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(signature)) return false;
  const expected = Buffer.from(signUserId(secret, userId), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature.toLowerCase(), 'hex'));
}

/** Constant-time string comparison for tokens of possibly different lengths. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
