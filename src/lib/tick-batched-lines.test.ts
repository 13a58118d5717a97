import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { TickBatchedLines, type LineSink } from './tick-batched-lines.js';

/** A sink that records each write it is handed. */
function recordingSink() {
  const writes: string[] = [];
  const calls: string[] = [];
  const sink: LineSink = {
    write: (data) => void writes.push(data.toString('utf8')),
    flush: (cb) => {
      calls.push('flush');
      cb?.();
    },
    flushSync: () => void calls.push('flushSync'),
  };
  return { sink, writes, calls };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TickBatchedLines', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('hands the lines of one turn to the sink as one write, in order, by the end of that turn', async () => {
    const { sink, writes } = recordingSink();
    const lines = new TickBatchedLines(sink);
    lines.write('a\n');
    lines.write('b\n');
    lines.write('c\n');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['a\nb\nc\n']);
    lines.write('d\n');
    await turn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
    await turn();
    expect(writes).toHaveLength(2);
  });

  it('hands gathered lines over before flushing the sink', () => {
    const { sink, writes, calls } = recordingSink();
    const lines = new TickBatchedLines(sink);
    lines.write('a\n');
    lines.flushSync();
    expect(writes).toEqual(['a\n']);
    expect(calls).toEqual(['flushSync']);
    lines.write('b\n');
    let flushed = false;
    lines.flush(() => (flushed = true));
    expect(writes).toEqual(['a\n', 'b\n']);
    expect(flushed).toBe(true);
  });

  it('hands the lines over as bytes, multi-byte characters whole', async () => {
    const { sink } = recordingSink();
    const buffers: Buffer[] = [];
    const lines = new TickBatchedLines({ ...sink, write: (data) => void buffers.push(data) });
    lines.write('{"msg":"café ☕"}\n');
    lines.write('{"msg":"😀"}\n');
    await turn();
    expect(buffers).toHaveLength(1);
    expect(Buffer.isBuffer(buffers[0])).toBe(true);
    expect(buffers[0].toString('utf8')).toBe('{"msg":"café ☕"}\n{"msg":"😀"}\n');
  });

  it("writes a pino logger's lines through the app's SonicBoom (synchronous, buffer mode) in one write per turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'answerdesk-lines-'));
    dirs.push(dir);
    const file = join(dir, 'log');
    const sonic = pino.destination({ dest: file, sync: true, mkdir: true, contentMode: 'buffer' });
    let writes = 0;
    const sink: LineSink = {
      write: (data) => {
        writes++;
        // Buffer mode: SonicBoom's type declarations know only text writes.
        return sonic.write(data as unknown as string);
      },
      flush: (cb) => sonic.flush(cb),
      flushSync: () => sonic.flushSync(),
    };
    const log = pino({ base: null }, new TickBatchedLines(sink));
    for (let i = 0; i < 50; i++) log.info({ i }, 'request completed');
    await turn();
    // Written by the end of the turn, without a flush: a process killed now has lost none of them.
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(50);
    log.info({ i: 50 }, 'shut down');
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    sonic.flushSync();
    const logged = readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { i: number }).i);
    expect(logged).toEqual(Array.from({ length: 51 }, (_, i) => i));
    expect(writes).toBe(2);
  });
});
