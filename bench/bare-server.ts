/**
 * Child process of the API benchmark: a bare node:http server answering a fixed JSON body, the
 * ceiling any framework is measured against. Prints `{port}` once listening.
 */
import { createServer } from 'node:http';
import { announceReady } from './lib.js';

const body = process.env.BARE_BODY ?? '{}';
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  announceReady({ port: (server.address() as { port: number }).port });
});
