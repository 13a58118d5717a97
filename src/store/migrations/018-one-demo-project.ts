import { sql, type Kysely, type Migration } from 'kysely';

/**
 * At most one demo project, held by the database. The first start creates it when it finds no
 * project at all; nodes started together on an empty database (a rollout, a scaled service) each
 * found none and each made one, with its own keys, help center, action and skills. The demo project
 * is now marked, and under this index the later insert fails with a unique violation (on PostgreSQL
 * once the earlier one commits), which the start reads as "another node made it". The mark goes
 * with the project, so an emptied database gets a demo project again on its next start, as before.
 */
export const oneDemoProject: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('projects').addColumn('demo', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.createIndex('projects_one_demo').on('projects').column('demo').unique().where(sql.ref('demo'), '=', 1).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('projects_one_demo').execute();
    await db.schema.alterTable('projects').dropColumn('demo').execute();
  },
};
