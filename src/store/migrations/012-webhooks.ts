import type { Kysely, Migration } from 'kysely';

/**
 * Outbound webhooks (Standard Webhooks): a project's endpoints, the events of the outbox and one
 * delivery per (event, endpoint).
 *
 * The outbox: an event and its deliveries are inserted in the same transaction as the change that
 * caused it, so an event exists exactly when its change committed. Workers on every node claim due
 * deliveries with a conditional update (a lease, as ingestion jobs are claimed), so one delivery
 * is in flight on one node at a time, and one whose node died is taken over when its lease ends.
 */
export const webhooks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('events', 'text')
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_until', 'text')
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('disabled_reason', 'text')
      .addColumn('disabled_at', 'text')
      .addColumn('failing_since', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_endpoints_project').on('webhook_endpoints').columns(['project_id', 'created_at']).execute();

    await db.schema
      .createTable('webhook_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_events_project').on('webhook_events').columns(['project_id', 'created_at']).execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
      .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('last_attempt_at', 'text')
      .addColumn('response_status', 'integer')
      .addColumn('duration_ms', 'integer')
      .addColumn('error', 'text')
      .addColumn('delivered_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_lease').on('webhook_deliveries').columns(['status', 'lease_until']).execute();
    await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at']).execute();
    await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('webhook_deliveries').execute();
    await db.schema.dropTable('webhook_events').execute();
    await db.schema.dropTable('webhook_endpoints').execute();
  },
};
