/** The part of a pino destination (SonicBoom in `contentMode: 'buffer'`) that the batcher hands lines to. */
export interface LineSink {
  write(data: Buffer): unknown;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/**
 * A pino destination that gathers the lines logged during one turn of the event loop and hands them
 * to `sink` as one write, in the same turn (a `setImmediate`, which runs once the turn's I/O
 * callbacks are done). Under load a turn answers dozens of requests, so their access lines cost one
 * write instead of dozens (`npm run bench api`). Unlike a minimum write size, no line waits past the
 * turn that logged it, however quiet the server is. The lines go over as one Buffer: encoded once,
 * where SonicBoom's text mode measures, writes and re-encodes a string on every write. `flush` and
 * `flushSync` hand the gathered lines over first, so a shutdown or an exit loses nothing more than
 * the sink alone would.
 */
export class TickBatchedLines {
  private pending = '';
  private scheduled = false;

  constructor(private readonly sink: LineSink) {}

  write(line: string): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.handOver);
    }
    this.pending += line;
  }

  /** Hands the gathered lines to the sink, then flushes it (pino's `logger.flush`). */
  flush(cb?: (err?: Error) => void): void {
    this.handOver();
    this.sink.flush(cb);
  }

  /** Hands the gathered lines to the sink and writes everything synchronously (at exit). */
  flushSync(): void {
    this.handOver();
    this.sink.flushSync();
  }

  private readonly handOver = (): void => {
    this.scheduled = false;
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.sink.write(Buffer.from(lines));
  };
}
