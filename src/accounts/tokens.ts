import { base62 } from '../lib/ids.js';
import { hashKey } from '../lib/keys.js';

/** A random bearer token (session id, invite or setup link): 43 base62 characters, about 256 bits. */
export function newToken(): string {
  return base62(43);
}

/** What is stored instead of a token: its SHA-256, hex. A token is random, so no salt or KDF is needed. */
export function hashToken(token: string): string {
  return hashKey(token);
}
