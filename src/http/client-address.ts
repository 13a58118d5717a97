import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/** Whether the hop at `address`, `hop` steps from the server (0: the socket's peer), is a trusted proxy. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The proxy trust that `TRUST_PROXY` sets: none (the socket's address is the client's), the `n`
 * nearest hops, or the hops whose addresses are listed (IPs, CIDRs, or proxy-addr's `loopback`,
 * `linklocal`, `uniquelocal`). Fastify no longer takes a bare hop count, so a count becomes a
 * trust function here; a list is compiled by proxy-addr, as Fastify does.
 */
export function proxyTrust(setting: Config['TRUST_PROXY']): ProxyTrust | false {
  if (setting === false) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyAddr.compile(setting);
}

/**
 * The client's address: `X-Forwarded-For` read from the right, past the trusted hops, so the
 * entries a client wrote itself (on the left) are never used while a trusted proxy appends the
 * address it saw. Without trust, the socket's address.
 */
export function clientAddress(request: FastifyRequest, trust: ProxyTrust | false): string {
  return trust ? proxyAddr(request.raw, trust) : request.ip;
}
