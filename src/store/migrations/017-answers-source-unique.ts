import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/** The `options` of a project's answers source (src/knowledge/faq.ts), as stored then. */
const ANSWERS_MARK = '{"role":"answers"}';

/**
 * At most one answers source per project, held by the database. The first resolve of a gap on a
 * project creates that source after finding none, and two resolves at the same moment could both
 * find none and each create one: the answers were then split between two sources, and every later
 * answer went to the older one. Under this index the later insert fails with a unique violation
 * (on PostgreSQL once the earlier one commits), and the resolve reads the winner's source and adds
 * its answer there.
 *
 * A database written before it may already hold such twins. The oldest stays the answers source,
 * as later resolves already treated it; the others lose the mark and stay ordinary FAQ sources, so
 * their answers remain searchable and the gaps that point at them keep their source.
 */
export const answersSourceUnique: Migration = {
  async up(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
      // Until this transaction ends, a node still on the previous version cannot create a twin
      // between the clean-up below and the index build (which would then fail).
      await sql`lock table knowledge_sources in share row exclusive mode`.execute(db);
    }
    await sql`
      update knowledge_sources set options = '{}'
      where type = 'faq' and options = ${ANSWERS_MARK} and exists (
        select 1 from knowledge_sources kept
        where kept.project_id = knowledge_sources.project_id and kept.type = 'faq' and kept.options = ${ANSWERS_MARK}
          and (kept.created_at < knowledge_sources.created_at or (kept.created_at = knowledge_sources.created_at and kept.id < knowledge_sources.id)))`.execute(db);
    await db.schema
      .createIndex('knowledge_sources_one_answers')
      .on('knowledge_sources')
      .column('project_id')
      .unique()
      .where((eb) => eb.and([eb(sql.ref('type'), '=', 'faq'), eb(sql.ref('options'), '=', ANSWERS_MARK)]))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('knowledge_sources_one_answers').execute();
  },
};
