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

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  /**
   * The cached value, returned as it is (no promise: the common case takes no trip through the
   * microtask queue); on a miss, `load()`'s, kept unless it is null or a clear() came while it was
   * read. A value read before an admin write cleared the cache must not be stored after the clear,
   * or the node would serve the old value for a whole TTL.
   */
  getOrLoad<R extends V | null>(key: string, load: () => Promise<R>): V | Promise<R> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const clears = this.clears;
    return load().then((value) => {
      if (value !== null && clears === this.clears) this.set(key, value);
      return value;
    });
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
