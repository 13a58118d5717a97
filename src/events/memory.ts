import { deliver, type BusEvent, type BusListener, type EventBus } from './types.js';

/** Listeners of each topic, in this process: one node, no Redis. */
export function createMemoryBus(): EventBus {
  const topics = new Map<string, Set<BusListener>>();
  return {
    kind: 'memory',
    async publish(topic: string, event: BusEvent) {
      const listeners = topics.get(topic);
      if (!listeners) return;
      // A copy per listener, as a round trip through Redis would give: no listener sees another's changes.
      const text = JSON.stringify(event);
      for (const listener of [...listeners]) deliver(listener, JSON.parse(text) as BusEvent);
    },
    async subscribe(topic: string, listener: BusListener) {
      let listeners = topics.get(topic);
      if (!listeners) topics.set(topic, (listeners = new Set()));
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && topics.get(topic) === listeners) topics.delete(topic);
      };
    },
    async close() {
      topics.clear();
    },
  };
}
