import { Redis } from 'ioredis';
import { redisConnectFailure } from '../lib/redis-connect.js';
import { deliver, type BusEvent, type BusListener, type EventBus, type EventBusOptions } from './types.js';

/**
 * Redis pub/sub: one connection publishes, one subscribes (a subscribed connection can do nothing
 * else). A node subscribes to a topic in Redis while it has at least one listener for it, and hears
 * its own publishes back like any other node's, so every listener sees every event once and in the
 * order Redis delivered them. While Redis is away, publishes fail (reported through `onError`) and
 * listeners hear nothing; the SSE endpoints catch up from the store on the next event or reconnect.
 */
export async function createRedisBus(url: string, options: EventBusOptions = {}): Promise<EventBus> {
  const prefix = options.prefix ?? 'answerdesk:events:';
  const settings = {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: 1,
    // No queue while disconnected: a live event that cannot go now is not worth sending late.
    enableOfflineQueue: false,
  };
  const pub = new Redis(url, settings);
  // The subscriber resubscribes by itself after a reconnect (ioredis' autoResubscribe).
  const sub = new Redis(url, { ...settings, enableOfflineQueue: true });
  let lastErrorEvent: Error | undefined;
  const report = (err: Error) => {
    lastErrorEvent = err;
    options.onError?.(err);
  };
  pub.on('error', report);
  sub.on('error', report);
  try {
    await Promise.all([pub.connect(), sub.connect()]);
  } catch (err) {
    pub.disconnect();
    sub.disconnect();
    throw redisConnectFailure(url, lastErrorEvent ?? err);
  }

  const topics = new Map<string, Set<BusListener>>();
  /** Each topic's SUBSCRIBE in flight or done, so a second listener also waits until Redis confirmed it. */
  const subscribed = new Map<string, Promise<void>>();
  sub.on('message', (channel: string, text: string) => {
    const listeners = topics.get(channel.slice(prefix.length));
    if (!listeners || !channel.startsWith(prefix)) return;
    let event: BusEvent;
    try {
      event = JSON.parse(text) as BusEvent;
    } catch {
      return;
    }
    for (const listener of [...listeners]) deliver(listener, event);
  });

  return {
    kind: 'redis',
    async publish(topic: string, event: BusEvent) {
      try {
        await pub.publish(prefix + topic, JSON.stringify(event));
      } catch (err) {
        report(err as Error);
      }
    },
    async subscribe(topic: string, listener: BusListener) {
      let listeners = topics.get(topic);
      if (!listeners) {
        topics.set(topic, (listeners = new Set()));
        subscribed.set(
          topic,
          sub.subscribe(prefix + topic).then(
            () => undefined,
            (err: Error) => report(err),
          ),
        );
      }
      listeners.add(listener);
      await subscribed.get(topic);
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0 || topics.get(topic) !== listeners) return;
        topics.delete(topic);
        subscribed.delete(topic);
        sub.unsubscribe(prefix + topic).catch(report);
      };
    },
    async close() {
      topics.clear();
      pub.disconnect();
      sub.disconnect();
    },
  };
}
