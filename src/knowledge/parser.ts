import { Worker } from 'node:worker_threads';
import { documentSize, parseDocument, type DocumentInput, type ParsedDocument } from './parse.js';
import type { ParseReply } from './parse-worker.js';
import type { ChunkDraft } from './types.js';

/**
 * Plain text and FAQ documents at least this large (characters of a payload) are read in the worker
 * thread, smaller ones in place. Markdown, HTML and PDF documents and fetched pages are read in the
 * worker whatever their size (DocumentParser.parse).
 */
export const OFF_THREAD_MIN_SIZE = 64 * 1024;
/** An idle worker is stopped after this long; the next document read off the main thread starts a new one. */
const IDLE_MS = 30_000;

export interface DocumentParserOptions {
  /** Size from which plain text and FAQs are read off the main thread (Infinity: nothing is). */
  offThreadMinSize?: number;
  idleMs?: number;
}

interface Pending {
  resolve(doc: ParsedDocument): void;
  reject(err: unknown): void;
  chunks: ChunkDraft[];
}

/**
 * Reads documents for ingestion without holding up the event loop: a document whose reading can
 * take long (a 19 MB Markdown manual took seconds to lex, 64 KB of `_a` took 6 s) is parsed and
 * chunked in a worker thread, so health checks and answers go on meanwhile; the chunks come back in
 * batches, each deserialized in a few milliseconds. One worker, started on first use and stopped
 * when idle; it does not keep the process alive unless it is working. A worker that dies fails the
 * documents it held, not the process.
 */
export class DocumentParser {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly offThreadMinSize: number;
  private readonly idleMs: number;

  constructor(options: DocumentParserOptions = {}) {
    this.offThreadMinSize = options.offThreadMinSize ?? OFF_THREAD_MIN_SIZE;
    this.idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Reads and chunks a document; `signal` gives up on it (and stops the worker's work on it). */
  async parse(input: DocumentInput, signal?: AbortSignal): Promise<ParsedDocument> {
    signal?.throwIfAborted();
    if (this.readsInPlace(input)) return parseDocument(input);
    return this.offThread(input, signal);
  }

  /**
   * Whether a document is read on this thread: only plain text and FAQs under offThreadMinSize,
   * whose readers take time in proportion to the size, whatever the text (at most ~20 ms at 64 KB).
   * Markdown, HTML and PDF are read in the worker whatever their size, as is a page fetched from
   * the web (its author is not the project's): small documents can make their readers slow. marked
   * takes about the square of a run of emphasis' length (`_a` repeated: 4 KB 27 ms, 16 KB 0.35 s,
   * just under 64 KB 5.9 s), Readability took 34 ms or more over 4 KB of `<p>a`, pdf.js 13 ms or
   * more over a 2-page PDF (`npm run bench reading`; docs/knowledge.md). A warm worker's round trip
   * costs this thread less than reading even a small document here (0.4 ms against 0.8 ms for 2 KB
   * of ordinary Markdown); only the first document after an idle spell waits for the worker to
   * start (0.35 s for Markdown on a quiet machine, more for HTML or under load). Infinity keeps
   * everything on this thread.
   */
  private readsInPlace(input: DocumentInput): boolean {
    if (this.offThreadMinSize === Infinity) return true;
    return input.kind === 'stored' && (input.type === 'text' || input.type === 'faq') && documentSize(input) < this.offThreadMinSize;
  }

  /** Stops the worker; documents it was reading fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.failAll(new Error('The document parser was stopped'));
    await worker?.terminate();
  }

  private offThread(input: DocumentInput, signal?: AbortSignal): Promise<ParsedDocument> {
    const worker = this.worker ?? this.start();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    worker.ref();
    const id = this.nextId++;
    return new Promise<ParsedDocument>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        reject(signal!.reason);
        // The worker reads one document at a time: stopping it is the only way to stop the reading.
        if (this.pending.size === 0) void this.close();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        chunks: [],
        resolve: (doc) => {
          settle();
          resolve(doc);
        },
        reject: (err) => {
          settle();
          reject(err);
        },
      });
      worker.postMessage({ id, input });
    });
  }

  private start(): Worker {
    const worker = new Worker(new URL('./parse-worker.mjs', import.meta.url), {
      // Flags that only the main thread accepts (a `node --input-type` eval) are left out.
      execArgv: process.execArgv.filter((arg) => !arg.startsWith('--input-type')),
    });
    worker.on('message', (reply: ParseReply) => this.onReply(reply));
    const lost = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll(err);
    };
    worker.on('error', (err) => lost(err));
    worker.on('exit', (code) => lost(new Error(`The document parser's worker stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private onReply(reply: ParseReply): void {
    const job = this.pending.get(reply.id);
    if (!job) return;
    if (reply.type === 'chunks') {
      for (const chunk of reply.chunks) job.chunks.push(chunk);
      return;
    }
    this.pending.delete(reply.id);
    if (reply.type === 'done') job.resolve({ title: reply.title, links: reply.links, chunks: job.chunks });
    else job.reject(new Error(reply.message));
    if (this.pending.size === 0 && this.worker) {
      this.worker.unref();
      this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private failAll(err: Error): void {
    const jobs = [...this.pending.values()];
    this.pending.clear();
    for (const job of jobs) job.reject(err);
  }
}
