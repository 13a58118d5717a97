import { createHmac, randomBytes } from 'node:crypto';

/** How Standard Webhooks marks a symmetric signing secret. */
export const SECRET_PREFIX = 'whsec_';

/** Random bytes in a new secret: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * One Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`,
 * keyed with the bytes the secret's base64 part decodes to (not its text).
 */
export function sign(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-*` headers of one attempt; several secrets (a rotation's grace period) give a space-separated list. */
export function signedHeaders(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, webhookId, timestampSeconds, body)).join(' '),
  };
}
