import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One webhook request as the receiver got it: headers and the raw body text, byte for byte. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered (null: it never answered). */
  answered: number | null;
}

/** How the receiver answers one request: a status (with headers), or `hang` (never answers: a timeout). */
export type Reply = { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
  received: ReceivedWebhook[];
  /** Replies for the next requests, in order; once used up, every request gets `fallback`. */
  script(...replies: Reply[]): void;
  fallback: Reply;
  close(): Promise<void>;
}

/**
 * A webhook consumer on a real socket: records every request and answers as scripted. It checks
 * nothing itself; tests verify what it got with an independent Standard Webhooks implementation.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const queue: Reply[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const receiver: WebhookReceiver = {
    base: '',
    port: 0,
    received: [],
    fallback: { status: 204 },
    script: (...replies) => void queue.push(...replies),
    close: async () => {
      for (const res of hanging) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = queue.shift() ?? receiver.fallback;
      const entry: ReceivedWebhook = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: null };
      receiver.received.push(entry);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      entry.answered = reply.status;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.status === 204 ? undefined : 'ok');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.base = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
