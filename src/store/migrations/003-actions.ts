import type { Kysely, Migration } from 'kysely';

/**
 * Custom actions (a project's own HTTP endpoints the agent may call) and their call log. The log
 * holds only what an operator needs to debug (time, outcome, HTTP status, latency, a short error):
 * never URLs with arguments, headers, bodies or user tokens.
 */
export const actions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('actions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('headers', 'text', (c) => c.notNull())
      .addColumn('parameters', 'text', (c) => c.notNull())
      .addColumn('query_params', 'text')
      .addColumn('body_params', 'text')
      .addColumn('examples', 'text', (c) => c.notNull())
      .addColumn('timeout_ms', 'integer', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('actions_project_name', ['project_id', 'name'])
      .execute();

    await db.schema
      .createTable('action_calls')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('action_id', 'text', (c) => c.notNull().references('actions.id').onDelete('cascade'))
      .addColumn('conversation_id', 'text')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('action_calls_action_created')
      .on('action_calls')
      .columns(['action_id', 'created_at', 'id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('action_calls').execute();
    await db.schema.dropTable('actions').execute();
  },
};
