import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { NotFound } from '../../lib/errors.js';

/** The demo shop's fictional orders (demo/shop/orders.json), which the demo's order-tracking action reads. */
const ORDERS_FILE = fileURLToPath(new URL('../../../demo/shop/orders.json', import.meta.url));

/** An order number of the demo shop: NW- and six digits. */
export const ORDER_NUMBER = /^NW-\d{6}$/;

export const demoOrderParams = z.object({
  orderId: z.string().regex(ORDER_NUMBER, 'must be NW- followed by six digits').describe('The order number, e.g. NW-204817.'),
});

const STATUS_TEXT: Record<string, string> = {
  received: 'Received: we have the order and the payment has been authorised.',
  on_hold: 'On hold: the payment needs attention or the order is being checked; the customer gets an e-mail if they need to do something.',
  processing: 'Processing: the items are being picked in the warehouse.',
  packed: 'Packed: the parcel is waiting for the carrier; the order can no longer be changed or cancelled.',
  shipped: 'Shipped: the carrier has the parcel and it can be tracked.',
  out_for_delivery: 'Out for delivery: the carrier expects to deliver today.',
  delivered: 'Delivered: the carrier has registered the delivery.',
  cancelled: 'Cancelled: the order was cancelled.',
};

export const demoOrder = z
  .object({
    orderNumber: z.string(),
    status: z.string().describe('received, on_hold, processing, packed, shipped, out_for_delivery, delivered or cancelled.'),
    message: z.string().describe('What the status means, in a sentence.'),
    placedAt: z.string(),
    shippingMethod: z.string(),
    carrier: z.string().nullable(),
    trackingNumber: z.string().nullable(),
    estimatedDelivery: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    items: z.array(z.object({ name: z.string(), quantity: z.number() })),
    total: z.number(),
    currency: z.string(),
  })
  .meta({ id: 'DemoOrder', description: "An order of the demo shop, as its order-tracking action sees it (no e-mail address or country)." });
export type DemoOrder = z.infer<typeof demoOrder>;

interface StoredOrder {
  id: string;
  placedAt: string;
  status: string;
  shippingMethod: string;
  carrier: string | null;
  trackingNumber: string | null;
  estimatedDelivery: string | null;
  deliveredAt: string | null;
  items: Array<{ name: string; quantity: number }>;
  total: number;
  currency: string;
}

/** One demo order by number, or 404. The e-mail address and country stay out of the answer. */
export async function findDemoOrder(orderNumber: string): Promise<DemoOrder> {
  // Read on each call: eight small orders, and no cache to keep in step with the file.
  const o = (JSON.parse(await readFile(ORDERS_FILE, 'utf8')) as StoredOrder[]).find((x) => x.id === orderNumber);
  if (!o) throw NotFound('Order not found');
  return {
    orderNumber: o.id,
    status: o.status,
    message: `Order ${o.id} is ${STATUS_TEXT[o.status] ?? o.status}`,
    placedAt: o.placedAt,
    shippingMethod: o.shippingMethod,
    carrier: o.carrier,
    trackingNumber: o.trackingNumber,
    estimatedDelivery: o.estimatedDelivery,
    deliveredAt: o.deliveredAt,
    items: o.items.map((i) => ({ name: i.name, quantity: i.quantity })),
    total: o.total,
    currency: o.currency,
  };
}
