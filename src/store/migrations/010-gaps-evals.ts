import type { Kysely, Migration } from 'kysely';

/**
 * Knowledge gaps and answer regression tests.
 *
 * `knowledge_gaps`: one row per question the agent could not answer (declined, or answered and
 * rated down), grouped by meaning. The row gives the group a stable id, so an admin can resolve or
 * dismiss it; which conversations belong to it is computed when the gaps are read. `signature`
 * (the sorted key terms of the group's first question) keeps two readers from creating the same gap
 * twice.
 *
 * `eval_suites` and `eval_runs`: a named set of question cases and the results of every run of it,
 * so a change of prompt, model or knowledge can be compared with the run before.
 */
export const gapsEvals: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('knowledge_gaps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('question', 'text', (c) => c.notNull())
      .addColumn('terms', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('answer', 'text')
      .addColumn('faq_source_id', 'text')
      .addColumn('closed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('knowledge_gaps_signature').on('knowledge_gaps').columns(['project_id', 'signature']).unique().execute();

    await db.schema
      .createTable('eval_suites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('cases', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('eval_suites_project').on('eval_suites').columns(['project_id', 'created_at']).execute();

    await db.schema
      .createTable('eval_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('eval_id', 'text', (c) => c.notNull().references('eval_suites.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('metrics', 'text', (c) => c.notNull())
      .addColumn('results', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('eval_runs_eval').on('eval_runs').columns(['eval_id', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('eval_runs').execute();
    await db.schema.dropTable('eval_suites').execute();
    await db.schema.dropTable('knowledge_gaps').execute();
  },
};
