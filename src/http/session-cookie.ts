import type { FastifyReply, FastifyRequest } from 'fastify';
import type { NewSession } from '../accounts/sessions.js';

/** The dashboard's session cookie. Its value is the session token; the store keeps only its hash. */
export const SESSION_COOKIE = 'answerdesk_session';

/** The session cookie's value, if the request carries one. */
export function sessionToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    return value || null;
  }
  return null;
}

/**
 * `HttpOnly` (no script reads it), `SameSite=Lax` (not sent on cross-site subrequests), `Path=/`,
 * and `Secure` when the request came over https (directly, or as a trusted proxy's
 * `X-Forwarded-Proto` says when TRUST_PROXY is set). It lives as long as the session may.
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: NewSession, maxAgeMs: number): void {
  reply.header('set-cookie', cookie(request, session.token, Math.floor(maxAgeMs / 1000)));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0));
}

function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
  if (maxAgeSeconds === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (request.protocol === 'https') parts.push('Secure');
  return parts.join('; ');
}

/**
 * Whether a request that carries the session cookie comes from the dashboard's own origin: the
 * browser says so in `Sec-Fetch-Site` (`same-origin`, or `none` for what the user typed), or, from
 * browsers that do not send it, `Origin` is this server's own origin (as the request reached it, or
 * ANSWERDESK_PUBLIC_URL). A request with neither header is refused: every browser sends one of them
 * on an unsafe method, so its absence means another kind of client replaying a cookie.
 */
export function fromOwnOrigin(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  const own = [`${request.protocol}://${request.host}`];
  if (publicUrl) own.push(new URL(publicUrl).origin);
  return own.some((o) => o.toLowerCase() === origin.toLowerCase());
}
