import { load, printTable, startChild, stopChild, type LoadResult } from './lib.js';

/**
 * GET /widget/config and GET /chat/conversations?userId=… on the real server (SQLite, info logs to a
 * file) against a bare node:http server answering the same widget JSON, 50 connections each, in
 * one run so the ratio compares like with like. A bare Fastify (one route, no logger, nothing of
 * ours) answering the same bytes shows the framework's own floor between the two. Each run also
 * reports the server process's CPU time per request (its own process.cpuUsage() before and after),
 * which a shared machine distorts far less than req/s: the load generator competes with the server
 * for the same cores.
 */
export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const api = await startChild<{ port: number; publicKey: string }>('bench/api-server.ts', { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
  const base = `http://127.0.0.1:${api.info.port}/api/v1`;
  const headers = { 'x-api-key': api.info.publicKey };
  const configBody = await (await fetch(`${base}/widget/config`, { headers })).text();
  if (!configBody.startsWith('{')) throw new Error(`unexpected /widget/config answer: ${configBody}`);
  const bare = await startChild<{ port: number }>('bench/bare-server.ts', { BARE_BODY: configBody });
  const fastify = await startChild<{ port: number }>('bench/fastify-server.ts', { BARE_BODY: configBody });
  try {
    // Warm-up, so JIT and caches settle before the measured runs.
    await load('warm-up', `${base}/widget/config`, { headers, duration: 2 });
    await load('warm-up', `http://127.0.0.1:${bare.info.port}/`, { duration: 1 });
    await load('warm-up', `http://127.0.0.1:${fastify.info.port}/`, { duration: 1 });
    const rows = [
      await load('bare node:http (same JSON)', `http://127.0.0.1:${bare.info.port}/`, { duration, server: bare }),
      await load('bare Fastify (same JSON)', `http://127.0.0.1:${fastify.info.port}/`, { duration, server: fastify }),
      await load('GET /widget/config', `${base}/widget/config`, { headers, duration, server: api }),
      await load('GET /chat/conversations?userId=…', `${base}/chat/conversations?userId=bench-user`, { headers, duration, server: api }),
    ];
    printTable(rows);
    const [baseline, floor, config, list] = rows;
    const pct = (r: { requestsPerSec: number }) => ((100 * r.requestsPerSec) / baseline.requestsPerSec).toFixed(1);
    // CPU per request is the figure that survives a busy machine: the ratio of bare to framework
    // CPU time is the throughput ratio the server would reach with the cores to itself.
    const cpuPct = (r: LoadResult) => (r.cpuUsPerRequest && baseline.cpuUsPerRequest ? ((100 * baseline.cpuUsPerRequest) / r.cpuUsPerRequest).toFixed(1) : '?');
    const us = (r: LoadResult) => (r.cpuUsPerRequest === null ? '?' : r.cpuUsPerRequest.toFixed(1));
    console.log(
      `/widget/config: ${pct(config)}% of bare node:http req/s, p99 ${config.p99} ms (goal ≥ 70%, p99 < 20 ms); ` +
        `server CPU ${us(config)} µs/req vs bare ${us(baseline)} µs/req = ${cpuPct(config)}% of bare's efficiency`,
    );
    console.log(
      `bare Fastify: ${pct(floor)}% of bare node:http req/s; server CPU ${us(floor)} µs/req = ${cpuPct(floor)}% of bare's efficiency ` +
        `(the framework's floor; the widget config's CPU above it is ours)`,
    );
    console.log(`/chat/conversations: ${pct(list)}% of bare node:http req/s, p99 ${list.p99} ms; server CPU ${us(list)} µs/req`);
    for (const r of rows) if (r.errors || r.non2xx) console.log(`warning: ${r.label} had ${r.errors} errors and ${r.non2xx} non-2xx answers`);
  } finally {
    await stopChild(api.child);
    await stopChild(bare.child);
    await stopChild(fastify.child);
  }
}
