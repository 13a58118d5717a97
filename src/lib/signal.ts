/**
 * A wake-up call inside one process: whoever has news calls `notify()`, the loops waiting for news
 * (subscribed with `subscribe`) run at once instead of at their next poll. It carries nothing and
 * queues nothing: the news itself is in the database.
 */
export class Signal {
  private readonly listeners = new Set<() => void>();

  notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on every notify; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}
