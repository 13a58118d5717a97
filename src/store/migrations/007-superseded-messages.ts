import type { Kysely, Migration } from 'kysely';

/**
 * A regenerated answer replaces the conversation's last answer. The old one is kept, marked with
 * the id of the answer that replaced it, so its feedback and usage stay true; history, the model
 * and the conversation's count and preview see only answers that are not superseded.
 */
export const supersededMessages: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('messages').addColumn('superseded_by', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('messages').dropColumn('superseded_by').execute();
  },
};
