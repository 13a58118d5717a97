import type { Kysely, Migration } from 'kysely';

export const core: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('hmac_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();

    await db.schema
      .createTable('end_users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('external_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('name', 'text')
      .addColumn('verified_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('end_users_project_external', ['project_id', 'external_id'])
      .execute();

    await db.schema
      .createTable('conversations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('end_user_id', 'text', (c) => c.references('end_users.id').onDelete('set null'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_message_preview', 'text')
      .addColumn('last_message_role', 'text')
      .addColumn('closed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('conversations_user_updated')
      .on('conversations')
      .columns(['project_id', 'end_user_id', 'updated_at', 'id'])
      .execute();
    await db.schema
      .createIndex('conversations_project_updated')
      .on('conversations')
      .columns(['project_id', 'updated_at', 'id'])
      .execute();

    await db.schema
      .createTable('messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('conversation_id', 'text', (c) =>
        c.notNull().references('conversations.id').onDelete('cascade'),
      )
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('parts', 'text')
      .addColumn('sources', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('model', 'text')
      .addColumn('usage', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('messages_conversation_seq', ['conversation_id', 'seq'])
      .execute();
    await db.schema
      .createIndex('messages_project_created')
      .on('messages')
      .columns(['project_id', 'created_at', 'id'])
      .execute();

    await db.schema
      .createTable('feedback')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('conversation_id', 'text', (c) =>
        c.notNull().references('conversations.id').onDelete('cascade'),
      )
      .addColumn('message_id', 'text', (c) => c.references('messages.id').onDelete('cascade'))
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('rating', 'text', (c) => c.notNull())
      .addColumn('comment', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('feedback_one_per_target', ['conversation_id', 'target'])
      .execute();

    await db.schema
      .createTable('skills')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('instructions', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('skills_project').on('skills').column('project_id').execute();
  },
};
