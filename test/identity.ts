import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * Hex HMAC-SHA256 made by OpenSSL, an implementation independent of ours, so a test using it proves
 * interoperability with what a customer's server computes, not agreement of our code with itself.
 */
export function opensslHmac(secret: string, message: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: message }).toString('utf8').trim();
  const hex = out.split(/\s+/).pop()!;
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`Unexpected openssl output: ${out}`);
  return hex;
}

/**
 * An HS256 JWT made by `jsonwebtoken` (not by `jose`, which the server uses); valid for 5 minutes
 * unless the claims carry their own `exp`.
 */
export function signHs256(secret: string, claims: Record<string, unknown>): string {
  return jwt.sign(claims, secret, { algorithm: 'HS256', ...('exp' in claims ? {} : { expiresIn: '5m' }) });
}

/** A token with `alg: none` and no signature: must never verify. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: Math.floor(Date.now() / 1000), ...claims })}.`;
}

/** An RS256 token from a fresh key pair: a well-formed JWT of an algorithm the server refuses. */
export function signRs256(claims: Record<string, unknown>): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return jwt.sign(claims, privateKey.export({ type: 'pkcs8', format: 'pem' }), { algorithm: 'RS256', expiresIn: '5m' });
}
