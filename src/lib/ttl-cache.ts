/**
 * A small per-node cache whose entries live `ttlMs`. Used for what every request reads and almost
 * never changes (key → project, a project's enabled skills). An admin write on this node clears every
 * cache of the group at once; other nodes (and the CLI) see the change after at most `ttlMs`.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private clears = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    if (this.ttlMs <= 0) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Changes with every clear(). A loader takes it before reading and hands it to set(): a value read
   * before an admin write cleared the cache must not be stored after the clear, or the node would
   * serve the old value for a whole TTL.
   */
  get epoch(): number {
    return this.clears;
  }

  set(key: string, value: V, epoch?: number): void {
    if (this.ttlMs <= 0) return;
    if (epoch !== undefined && epoch !== this.clears) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  clear(): void {
    this.clears++;
    this.entries.clear();
  }
}

/** Every cache of one app, so that one admin write can clear them together. */
export class CacheGroup {
  private readonly caches: TtlCache<unknown>[] = [];

  constructor(readonly ttlMs: number) {}

  create<V>(maxEntries?: number): TtlCache<V> {
    const cache = new TtlCache<V>(this.ttlMs, maxEntries);
    this.caches.push(cache as TtlCache<unknown>);
    return cache;
  }

  clear(): void {
    for (const cache of this.caches) cache.clear();
  }
}
