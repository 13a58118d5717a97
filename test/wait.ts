/** Polls `fn` until it returns something truthy (a condition, not a timing assertion). */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what} not met in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
