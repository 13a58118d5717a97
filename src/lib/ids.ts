import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the CSPRNG in blocks: one call per id (a request id on every request)
// cost more than the rest of id generation. Each byte is used once.
let pool = Buffer.alloc(0);
let offset = 0;

function randomByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++];
}

/** Uniform base62 string of `length` characters (rejection sampling, no modulo bias). */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export type IdPrefix =
  | 'proj' | 'key' | 'eu' | 'conv' | 'msg' | 'fb' | 'ks' | 'chunk' | 'act' | 'call' | 'skill' | 'job'
  | 'user' | 'inv'
  | 'wh' | 'evt' | 'dlv'
  | 'gap' | 'eval' | 'evrun';

/** A prefixed id with 22 base62 characters (≈131 random bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base62(22)}`;
}

/** ISO 8601 UTC with milliseconds: the one time format stored and returned. */
export function now(): string {
  return new Date().toISOString();
}
