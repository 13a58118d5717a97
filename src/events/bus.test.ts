import { afterEach, describe, expect, it } from 'vitest';
import { limiterKinds } from '../../test/helper.js';
import { base62 } from '../lib/ids.js';
import { createEventBus, type BusEvent, type EventBus } from './bus.js';

/** Both forms of the bus behave alike; Redis also carries events between two buses (two nodes). */
describe.each(limiterKinds)('events bus ($name)', (kind) => {
  const open: EventBus[] = [];
  const make = async (prefix = `test:${base62(8)}:`) => {
    const bus = await createEventBus(kind.url, { prefix });
    open.push(bus);
    return bus;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((b) => b.close()));
  });

  const collect = () => {
    const got: BusEvent[] = [];
    let wake: (() => void) | undefined;
    return {
      got,
      listener: (e: BusEvent) => {
        got.push(e);
        wake?.();
      },
      async until(n: number) {
        while (got.length < n) await new Promise<void>((r) => ((wake = r), setTimeout(r, 50)));
      },
    };
  };

  it('delivers to every listener of a topic, in order, and to no other topic; unsubscribing stops delivery', async () => {
    const bus = await make();
    expect(bus.kind).toBe(kind.name === 'redis' ? 'redis' : 'memory');
    const a = collect();
    const b = collect();
    const other = collect();
    const offA = await bus.subscribe('conv:1', a.listener);
    await bus.subscribe('conv:1', b.listener);
    await bus.subscribe('conv:2', other.listener);
    for (let i = 0; i < 5; i++) await bus.publish('conv:1', { n: i });
    await a.until(5);
    await b.until(5);
    expect(a.got).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(b.got).toEqual(a.got);
    offA();
    await bus.publish('conv:1', { n: 5 });
    await b.until(6);
    expect(a.got.length).toBe(5);
    expect(other.got).toEqual([]);
  });

  it('a listener that throws does not keep the event from the others', async () => {
    const bus = await make();
    const ok = collect();
    await bus.subscribe('t', () => {
      throw new Error('boom');
    });
    await bus.subscribe('t', ok.listener);
    await bus.publish('t', { x: 1 });
    await ok.until(1);
    expect(ok.got).toEqual([{ x: 1 }]);
  });

  // Only Redis joins nodes; the in-memory bus serves one process by design, so it has no such case.
  if (kind.name === 'redis') {
    it('carries events between two nodes that share a prefix, and not to another prefix', async () => {
      const prefix = `test:${base62(8)}:`;
      const nodeA = await make(prefix);
      const nodeB = await make(prefix);
      const elsewhere = await make();
      const onB = collect();
      const onElsewhere = collect();
      await nodeB.subscribe('conv:9', onB.listener);
      await elsewhere.subscribe('conv:9', onElsewhere.listener);
      await nodeA.publish('conv:9', { type: 'message', seq: 3 });
      await onB.until(1);
      expect(onB.got).toEqual([{ type: 'message', seq: 3 }]);
      await new Promise((r) => setTimeout(r, 100));
      expect(onElsewhere.got).toEqual([]);
    });
  }
});
