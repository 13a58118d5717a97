import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

/**
 * How the proxy treats traffic:
 * - `forward`: a plain TCP relay to the target;
 * - `refuse`: open connections are cut and new ones reset at once (the server went away);
 * - `silent`: open connections stop carrying bytes and new ones are accepted and never answered
 *   (packets dropped somewhere on the way). Connections that went silent stay silent.
 */
export type ProxyMode = 'forward' | 'refuse' | 'silent';

export interface TcpProxy {
  /** The port on 127.0.0.1 to connect to instead of the target's. */
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  setMode(mode: ProxyMode): void;
  /** Connections reset in `refuse` mode so far. */
  refused(): number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | null;
  silent: boolean;
}

/**
 * A TCP proxy on a local port in front of a real service (PostgreSQL, Redis), so a test can take the
 * service away from one app, or make it silent, without touching the service or the network stack.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  let refusedCount = 0;
  const pairs = new Set<Pair>();

  const cut = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };

  const server: Server = createServer((client) => {
    client.on('error', () => {});
    if (mode === 'refuse') {
      refusedCount++;
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, upstream: null, silent: mode === 'silent' };
    pairs.add(pair);
    client.on('close', () => cut(pair));
    if (pair.silent) return;
    const upstream = new Socket();
    pair.upstream = upstream;
    upstream.on('error', () => {});
    upstream.on('close', () => cut(pair));
    upstream.connect(target.port, target.host);
    // Bytes are relayed one by one rather than piped, so a pair can go silent mid-conversation.
    client.on('data', (data) => void (!pair.silent && upstream.write(data)));
    upstream.on('data', (data) => void (!pair.silent && client.write(data)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    setMode(next) {
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'refuse') cut(pair);
        if (next === 'silent') pair.silent = true;
      }
    },
    refused: () => refusedCount,
    async close() {
      for (const pair of [...pairs]) cut(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
