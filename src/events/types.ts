/**
 * The events bus: live, best-effort notifications between the parts of the app and across nodes
 * (a person's reply reaching a widget connected to another node, the dashboard inbox). It is not
 * durable: a subscriber that was not listening misses the event, so what it carries is a hint to
 * read the store again, never the only copy of anything. Durable notifications (webhooks) go through
 * an outbox table instead.
 */

/** A JSON-serializable event. */
export type BusEvent = Record<string, unknown>;

export type BusListener = (event: BusEvent) => void;

export interface EventBus {
  readonly kind: 'memory' | 'redis';
  /** Sends an event to every subscriber of `topic` on every node. Never throws: a failed publish is logged and dropped. */
  publish(topic: string, event: BusEvent): Promise<void>;
  /** Calls `listener` for each event on `topic` until the returned function is called. */
  subscribe(topic: string, listener: BusListener): Promise<() => void>;
  close(): Promise<void>;
}

export interface EventBusOptions {
  connectTimeoutMs?: number;
  /** Topic prefix in Redis, so that two deployments (or two tests) on one Redis do not hear each other. */
  prefix?: string;
  /** Called when publishing or subscribing fails (Redis away); the caller logs it. */
  onError?: (err: Error) => void;
}

/** One listener that throws must not keep the event from the others. */
export function deliver(listener: BusListener, event: BusEvent): void {
  try {
    listener(event);
  } catch {
    // The listener's own failure; the bus has nothing to add.
  }
}
