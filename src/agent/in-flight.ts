import { getHeapStatistics } from 'node:v8';

/** Heap one open answer may hold (history, prompt, stream buffers, SDK state): measured 0.3–0.5 MB. */
const HEAP_PER_ANSWER = 512 * 1024;

/**
 * Answers a node may run at once when ANSWERDESK_MAX_ANSWERS is unset: a quarter of the heap at
 * 0.5 MB each (about 1,000 for a 2 GB heap, 256 for 512 MB), so concurrent answers cannot exhaust
 * the heap however many clients send at once.
 */
export function defaultMaxAnswers(heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.max(10, Math.floor(heapLimit / 4 / HEAP_PER_ANSWER));
}

/** The reason an answer was stopped by its node (a shutdown that could not wait for it). */
export class AnswerInterruptedError extends Error {
  override name = 'AnswerInterruptedError';
}

export interface AnswerSlot {
  /** Aborted when the node stops this answer before it ends. */
  readonly signal: AbortSignal;
  /** Frees the slot. Call once, when the answer is stored and its conversation released. */
  release(): void;
}

/** Which cap refused an answer. */
export type CapacityRefusal = 'node' | 'project';

/**
 * The answers this node is running: bounded per node and per project, and reachable at shutdown
 * (wait for them, or stop them). One per app instance, so each node counts its own.
 */
export class InFlightAnswers {
  private readonly controllers = new Set<AbortController>();
  private readonly perProject = new Map<string, number>();
  private waiters: Array<() => void> = [];

  constructor(
    readonly maxPerNode: number,
    readonly maxPerProject: number,
  ) {}

  /** Answers running now. */
  get size(): number {
    return this.controllers.size;
  }

  /** A slot for one answer of `projectId`, or the cap that is full. Takes nothing when refused. */
  acquire(projectId: string): AnswerSlot | CapacityRefusal {
    if (this.controllers.size >= this.maxPerNode) return 'node';
    const ofProject = this.perProject.get(projectId) ?? 0;
    if (ofProject >= this.maxPerProject) return 'project';
    const controller = new AbortController();
    this.controllers.add(controller);
    this.perProject.set(projectId, ofProject + 1);
    let released = false;
    return {
      signal: controller.signal,
      release: () => {
        if (released) return;
        released = true;
        this.controllers.delete(controller);
        const left = (this.perProject.get(projectId) ?? 1) - 1;
        if (left > 0) this.perProject.set(projectId, left);
        else this.perProject.delete(projectId);
        if (this.controllers.size === 0) this.wakeWaiters();
      },
    };
  }

  /** Stops every running answer: each ends with an error chunk and is stored as failed. */
  abortAll(reason: AnswerInterruptedError): void {
    for (const controller of this.controllers) controller.abort(reason);
  }

  /** Resolves once no answer is running. */
  idle(): Promise<void> {
    if (this.controllers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
