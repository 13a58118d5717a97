import type { Kysely, Migration } from 'kysely';

/**
 * Dashboard accounts: people (users), what they may do per project (memberships), their server-side
 * sessions, one-time invite links and the first-run setup links. Sessions, invites and setup links
 * are stored by the SHA-256 of their random token, never the token itself; passwords by their scrypt
 * hash. Removing a user removes their sessions and memberships; removing a project its memberships.
 */
export const accounts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // Stored lower-cased: one account per address however it is typed.
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('memberships')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'project_id'])
      .execute();
    await db.schema.createIndex('memberships_project').on('memberships').column('project_id').execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      // Sliding: pushed forward on use. Absolute: fixed at login, a stolen cookie dies with it.
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('absolute_expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

    await db.schema
      .createTable('invites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      // JSON: [{projectId, role}] given to the new user when the invite is accepted.
      .addColumn('projects', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('setup_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const table of ['setup_tokens', 'invites', 'sessions', 'memberships', 'users']) await db.schema.dropTable(table).execute();
  },
};
