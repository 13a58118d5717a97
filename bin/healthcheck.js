#!/usr/bin/env node
// The container's HEALTHCHECK: exits 0 when GET /health on this node answers 200 within 3 seconds,
// else 1. Plain JavaScript with no imports of ours, so it starts in milliseconds (the image has no
// curl). It reads the same PORT and HOST the server listens on.
import { request } from 'node:http';

const port = Number(process.env.PORT || 3000);
const listen = process.env.HOST || '0.0.0.0';
const host = listen === '0.0.0.0' || listen === '::' ? '127.0.0.1' : listen;

const req = request({ host, port, path: '/health', method: 'GET', timeout: 3000 }, (res) => {
  res.resume();
  res.on('end', () => process.exit(res.statusCode === 200 ? 0 : 1));
});
req.on('timeout', () => {
  process.stderr.write(`healthcheck: no answer from ${host}:${port} within 3 s\n`);
  req.destroy();
  process.exit(1);
});
req.on('error', (err) => {
  process.stderr.write(`healthcheck: ${err.message}\n`);
  process.exit(1);
});
req.end();
