/**
 * Endpoints served by this server itself that outbound calls (actions) may reach although they sit
 * on a loopback address, which the SSRF guard otherwise refuses: the demo shop's order look-up. Each
 * allowance is one exact origin (scheme, host and the port this process listens on) and a path
 * pattern; anything else on that origin, and every other private address, stays refused.
 *
 * Built once at boot (on AppDeps) and filled by the server once it knows its port.
 */
export class LocalEndpoints {
  private readonly allowed: Array<{ origin: string; path: RegExp }> = [];

  /** Lets requests to `origin` (e.g. `http://127.0.0.1:3000`) whose path matches `path` through. */
  allow(origin: string, path: RegExp): void {
    this.allowed.push({ origin: new URL(origin).origin, path });
  }

  /** True when `url` is exactly one of the allowed endpoints: same origin, path matching, no credentials. */
  allows(url: URL): boolean {
    if (url.username || url.password) return false;
    return this.allowed.some((a) => a.origin === url.origin && a.path.test(url.pathname));
  }
}
