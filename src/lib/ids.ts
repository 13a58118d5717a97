import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string of `length` characters (rejection sampling, no modulo bias). */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix =
  | 'proj' | 'key' | 'eu' | 'conv' | 'msg' | 'fb' | 'ks' | 'chunk' | 'act' | 'call' | 'skill' | 'job';

/** A prefixed id with 22 base62 characters (≈131 random bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base62(22)}`;
}

/** ISO 8601 UTC with milliseconds: the one time format stored and returned. */
export function now(): string {
  return new Date().toISOString();
}
