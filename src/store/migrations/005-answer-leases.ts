import type { Kysely, Migration } from 'kysely';

/**
 * One row per conversation that is answering right now. The row is the lock that makes "one answer
 * at a time per conversation" hold across every node sharing the database: claimed with one
 * conditional write, released when the answer is stored, and taken over once `expires_at` has passed
 * (a node that died mid-answer does not block the conversation for ever).
 */
export const answerLeases: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('answer_leases')
      .addColumn('conversation_id', 'text', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('answer_leases').execute();
  },
};
