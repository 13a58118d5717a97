import type { Kysely, Migration } from 'kysely';

/**
 * What each answer did: `answered` (from the knowledge or the conversation), `declined` (said it
 * does not know, cited nothing), `action` (answered from an action it ran), `error` (failed). Null
 * for user messages and for answers stored before the column existed: their outcome was never
 * recorded and is not guessed afterwards. Analytics counts it; knowledge gaps start from `declined`.
 */
export const messageOutcome: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('messages').addColumn('outcome', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('messages').dropColumn('outcome').execute();
  },
};
