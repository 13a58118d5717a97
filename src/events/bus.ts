/**
 * The events bus: live, best-effort notifications between the parts of the app and across nodes
 * (a person's reply reaching a widget connected to another node, the dashboard inbox). It is not
 * durable: a subscriber that was not listening misses the event, so what it carries is a hint to
 * read the store again, never the only copy of anything. Durable notifications (webhooks) go through
 * an outbox table instead.
 */

import type { EventBus, EventBusOptions } from './types.js';

export type { BusEvent, BusListener, EventBus, EventBusOptions } from './types.js';

/**
 * The bus named by the config: Redis pub/sub when a URL is given (every node hears every event),
 * else this process's memory. Each form is loaded only when chosen.
 */
export async function createEventBus(redisUrl?: string, options: EventBusOptions = {}): Promise<EventBus> {
  if (redisUrl) {
    const { createRedisBus } = await import('./redis.js');
    return createRedisBus(redisUrl, options);
  }
  const { createMemoryBus } = await import('./memory.js');
  return createMemoryBus();
}

/** Topic of one conversation's live events. */
export function conversationTopic(projectId: string, conversationId: string): string {
  return `conv:${projectId}:${conversationId}`;
}

/** Topic of every live event of a project (the dashboard's inbox). */
export function projectTopic(projectId: string): string {
  return `project:${projectId}`;
}
