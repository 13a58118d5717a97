import type { Kysely, Migration } from 'kysely';

/**
 * Human handoff. A conversation's handoff state lives on its row (null, requested or active, with
 * who asked and who took it); an assistant message says who wrote it (`author_type` `agent` or
 * `human`, and the person's id and name), so a person's replies stay `assistant` messages for the
 * contract and for AI SDK clients. `declined_streak` counts the agent's answers in a row whose
 * outcome (migration 009) was `declined`, for the "hand off after N declined answers" policy.
 */
export const handoff: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('conversations')
      .addColumn('handoff_status', 'text')
      .execute();
    for (const column of ['handoff_reason', 'handoff_via', 'handoff_requested_at', 'handoff_assignee_id', 'handoff_assignee_name', 'handoff_accepted_at']) {
      await db.schema.alterTable('conversations').addColumn(column, 'text').execute();
    }
    await db.schema
      .alterTable('conversations')
      .addColumn('declined_streak', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('conversations_project_handoff').on('conversations').columns(['project_id', 'handoff_status']).execute();
    await db.schema.alterTable('messages').addColumn('author_type', 'text').execute();
    await db.schema.alterTable('messages').addColumn('author_id', 'text').execute();
    await db.schema.alterTable('messages').addColumn('author_name', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('conversations_project_handoff').execute();
    for (const column of ['handoff_status', 'handoff_reason', 'handoff_via', 'handoff_requested_at', 'handoff_assignee_id', 'handoff_assignee_name', 'handoff_accepted_at', 'declined_streak']) {
      await db.schema.alterTable('conversations').dropColumn(column).execute();
    }
    for (const column of ['author_type', 'author_id', 'author_name']) await db.schema.alterTable('messages').dropColumn(column).execute();
  },
};
