import type { Kysely, Migration } from 'kysely';

/**
 * When an endpoint's last attempt failed. An endpoint is turned off once every delivery failed for
 * five days, counted from `failing_since`; without this, a failure followed by a quiet week (no
 * events at all) and then one more failure counted as a week of failures, and a low-traffic
 * endpoint was turned off after two failed attempts. A failure long after the previous one now
 * starts a new run (src/webhooks/deliveries.ts).
 */
export const webhookLastFailure: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('webhook_endpoints').addColumn('last_failed_at', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('webhook_endpoints').dropColumn('last_failed_at').execute();
  },
};
