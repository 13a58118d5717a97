import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { isUniqueViolation } from '../store/index.js';
import { answersSourceUnique } from '../store/migrations/017-answers-source-unique.js';
import { addFaqItem } from './faq.js';
import { createSource } from './sources.js';

/** One answers source per project, also in a database where two resolves at once made twins. */
describe.each(dialects)('the answers source of a project ($name)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.deps.store.db;
  const answersSource = (projectId: string, at: string, question: string) =>
    createSource(t.deps, projectId, { type: 'faq', title: 'Answers from the support team', payload: JSON.stringify([{ question, answer: 'Yes.' }]), options: { role: 'answers' } }).then(
      async (row) => {
        await db().updateTable('knowledge_sources').set({ created_at: at }).where('id', '=', row.id).execute();
        return row;
      },
    );
  const optionsOf = async (id: string) => (await db().selectFrom('knowledge_sources').select('options').where('id', '=', id).executeTakeFirstOrThrow()).options;

  it('the migration keeps the oldest twin as the answers source and leaves the others as plain FAQ sources', async () => {
    const { project } = await createProject(t);
    const { project: alone } = await createProject(t);
    // As the race left a database before the index: three answers sources of one project.
    await answersSourceUnique.down!(db());
    const newer = await answersSource(project.id, '2026-01-02T00:00:00.000Z', 'Do you ship to Norway?');
    const oldest = await answersSource(project.id, '2026-01-01T00:00:00.000Z', 'Do you gift wrap?');
    const newest = await answersSource(project.id, '2026-01-03T00:00:00.000Z', 'Is there a shop in Berlin?');
    const single = await answersSource(alone.id, '2026-01-03T00:00:00.000Z', 'Do you gift wrap?');

    await db().transaction().execute((trx) => answersSourceUnique.up(trx));

    expect(await optionsOf(oldest.id)).toBe('{"role":"answers"}');
    expect(await optionsOf(newer.id)).toBe('{}');
    expect(await optionsOf(newest.id)).toBe('{}');
    expect(await optionsOf(single.id)).toBe('{"role":"answers"}');
    // The next answer goes to the one kept; the database refuses a second one.
    expect((await addFaqItem(t.deps, project.id, { question: 'Can I pay by invoice?', answer: 'Yes.' })).id).toBe(oldest.id);
    const refused = await answersSource(project.id, '2026-01-04T00:00:00.000Z', 'Twice?').then(() => null, (err: unknown) => err);
    expect(isUniqueViolation(refused)).toBe(true);
  });
});
