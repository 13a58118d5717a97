/** The part of a pino destination (SonicBoom) that the batcher hands lines to. */
export interface LineSink {
  write(data: string): unknown;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/**
 * A pino destination that gathers the lines logged during one turn of the event loop and hands them
 * to `sink` as one write, in the same turn (a `setImmediate`, which runs once the turn's I/O
 * callbacks are done). Each asynchronous SonicBoom write is a trip to libuv's thread pool and back;
 * under load a turn answers dozens of requests, so writing their access lines together saves most
 * of those trips (`npm run bench api`). Unlike a minimum write size, no line waits past the turn
 * that logged it, however quiet the server is. `flush` and `flushSync` hand the gathered lines over
 * first, so a shutdown or an exit loses nothing more than the sink alone would.
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
    this.sink.write(lines);
  };
}
