import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

export interface LoadResult {
  label: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Runs autocannon against one URL and keeps the figures we report. */
export async function load(
  label: string,
  url: string,
  options: { connections?: number; duration?: number; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration: options.duration ?? 10,
    headers: options.headers,
  });
  return {
    label,
    requestsPerSec: result.requests.average,
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
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      errors: r.errors,
      non2xx: r.non2xx,
    })),
  );
}

/**
 * Starts `node --import tsx <entry>` and waits for the line `{"ready":true,…}` that the entry prints
 * once it listens (port, keys…). Every other line (the server's own logs) keeps being read and
 * dropped, so a full pipe never slows the server down. The child is killed when the bench ends.
 */
export async function startChild<T>(entry: string, env: Record<string, string> = {}): Promise<{ info: T; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${entry} exited with ${code} before it was ready`));
    child.once('exit', onExit);
    lines.on('line', (line) => {
      if (!line.startsWith('{"ready":true')) return;
      child.off('exit', onExit);
      resolve(JSON.parse(line) as T);
    });
  });
  return { info, child };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}
