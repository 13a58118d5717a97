import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import autocannon from 'autocannon';

export interface LoadResult {
  label: string;
  requestsPerSec: number;
  /** Requests answered in the run (2xx and others). */
  requests: number;
  /** CPU time (user + system) the server process spent per request, in µs; null when not measured. */
  cpuUsPerRequest: number | null;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Runs autocannon against one URL and keeps the figures we report. */
export async function load(
  label: string,
  url: string,
  options: { connections?: number; duration?: number; headers?: Record<string, string>; server?: Child<unknown> } = {},
): Promise<LoadResult> {
  const before = await options.server?.cpuUsage();
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration: options.duration ?? 10,
    headers: options.headers,
  });
  const after = await options.server?.cpuUsage();
  const requests = result.requests.total;
  const cpu = before && after ? after.user - before.user + (after.system - before.system) : null;
  return {
    label,
    requestsPerSec: result.requests.average,
    requests,
    cpuUsPerRequest: cpu === null || requests === 0 ? null : cpu / requests,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function printTable(rows: LoadResult[]): void {
  console.table(
    rows.map((r) => ({
      target: r.label,
      'req/s': Math.round(r.requestsPerSec),
      // One decimal: the changes measured with it are a few per cent of about 20 µs.
      'server CPU µs/req': r.cpuUsPerRequest === null ? '' : Number(r.cpuUsPerRequest.toFixed(1)),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      errors: r.errors,
      non2xx: r.non2xx,
    })),
  );
}

/** A benchmark's child process, as startChild hands it back. */
export interface Child<T> {
  info: T;
  child: ChildProcess;
  logFile: string;
  /**
   * The child's own `process.cpuUsage()` (µs), asked for with SIGUSR2: CPU time survives a machine
   * shared with other work, where req/s mostly measures who got the cores.
   */
  cpuUsage(): Promise<{ user: number; system: number }>;
}

/**
 * Starts `node --import tsx <entry>` and waits for the `{"ready":true,…}` line that the entry sends
 * with announceReady() once it listens (port, keys…). The child's stdout, its logs, goes to a file
 * as in a production deployment: a pipe read by this busy process would fill up and stall the
 * server's log writes, measuring the pipe instead of the server. The child is killed when the bench ends.
 * With BENCH_PROFILE=<dir>, the child runs under `--cpu-prof` and writes its profile there on exit.
 */
export async function startChild<T>(
  entry: string,
  env: Record<string, string> = {},
  options: { nodeArgs?: string[]; ipc?: boolean } = {},
): Promise<Child<T>> {
  const logFile = join(tmpdir(), `answerdesk-bench-${basename(entry, '.ts')}-${process.pid}.log`);
  const out = openSync(logFile, 'w');
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, ...(options.nodeArgs ?? []), '--import', 'tsx', entry], {
    env: { ...process.env, ...env, BENCH_READY_FD: '3' },
    stdio: ['ignore', out, 'inherit', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  closeSync(out);
  process.once('exit', () => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdio[3] as Readable });
  const cpuWaiters: ((usage: { user: number; system: number }) => void)[] = [];
  lines.on('line', (line) => {
    if (line.startsWith('{"cpu":')) cpuWaiters.shift()?.((JSON.parse(line) as { cpu: { user: number; system: number } }).cpu);
  });
  const info = await new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${entry} exited with ${code} before it was ready (log: ${logFile})`));
    child.once('exit', onExit);
    lines.on('line', (line) => {
      if (!line.startsWith('{"ready":true')) return;
      child.off('exit', onExit);
      resolve(JSON.parse(line) as T);
    });
  });
  const cpuUsage = () =>
    new Promise<{ user: number; system: number }>((resolve) => {
      cpuWaiters.push(resolve);
      child.kill('SIGUSR2');
    });
  return { info, child, logFile, cpuUsage };
}

/** Called by a benchmark's child process once it listens: hands `info` to startChild. */
export function announceReady(info: Record<string, unknown>): void {
  const fd = Number(process.env.BENCH_READY_FD);
  const send = (message: Record<string, unknown>) => {
    const line = `${JSON.stringify(message)}\n`;
    if (fd > 2) writeSync(fd, line);
    else process.stdout.write(line);
  };
  // startChild's cpuUsage(); and a plain exit on SIGTERM, so that --cpu-prof writes its profile.
  process.on('SIGUSR2', () => send({ cpu: process.cpuUsage() }));
  process.once('SIGTERM', () => process.exit(0));
  send({ ready: true, ...info });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** What a child process has used so far: CPU time (µs) and, after a full GC when it runs with `--expose-gc`, its heap. */
export interface ChildUsage {
  cpuMicros: number;
  heapUsed: number;
  rss: number;
}

/**
 * Called by a benchmark's child process started with `ipc: true`: answers each `usage` message from
 * the bench with its own process.cpuUsage() and memory, so CPU time is the server's own, whatever
 * else runs on the machine.
 */
export function answerUsageRequests(): void {
  process.on('message', (message) => {
    if (message !== 'usage') return;
    (globalThis as { gc?: () => void }).gc?.();
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const usage: ChildUsage = { cpuMicros: cpu.user + cpu.system, heapUsed: memory.heapUsed, rss: memory.rss };
    process.send?.(usage);
  });
}

/** Asks a child started with `ipc: true` (and calling answerUsageRequests) for its usage. */
export async function usageOf(child: ChildProcess): Promise<ChildUsage> {
  const reply = new Promise<ChildUsage>((resolve) => child.once('message', (m) => resolve(m as ChildUsage)));
  child.send('usage');
  return reply;
}
