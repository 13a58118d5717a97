import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource } from '../../test/support/knowledge.js';
import { newId } from '../lib/ids.js';
import { insertChunks } from './ingest.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';
import { BROAD_MATCHES } from './search/full-text.js';

/** Sections holding "parcel" and "courier" in their text only, more of them than a search ranks in full. */
const TEXT_SECTIONS = BROAD_MATCHES + 300;

/**
 * A help manual where two words are held by more chunks than search ranks one by one: "parcel"
 * (also named by three headings) and "courier" (named by none). The heading sections have long
 * texts that mention the word once, while every text-only section repeats it in a few words, so
 * BM25 alone would put the text-only sections first.
 */
function manual(): string {
  const parts = ['# Delivery handbook'];
  for (let i = 0; i < TEXT_SECTIONS; i++) {
    parts.push(`## Shelf ${i}`, `Parcel courier parcel courier, shelf note ${i}.`);
  }
  const filler = 'Staff check labels, scan barcodes, weigh boxes and print manifests before the evening collection';
  for (const k of ['lockers', 'returns', 'insurance']) {
    parts.push(`## Parcel ${k}`, `${filler}; the parcel ${k} desk keeps its own log. ${filler}. ${filler}.`);
  }
  return parts.join('\n\n');
}

async function searchTop(t: TestApp, projectId: string, q: string, limit: number) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/admin/projects/${projectId}/knowledge/search?q=${encodeURIComponent(q)}&limit=${limit}`,
    headers: adminAuth(),
  });
  expect(res.statusCode).toBe(200);
  return (res.json() as { results: Array<{ chunkId: string; sourceId: string; headingPath: string[]; text: string; score: number }> }).results;
}

/** Search for words held by a large share of a project's chunks: a bounded read, still ranked, scoped and current. */
describe.each(dialects)('very common words ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let projectId: string;
  let otherProjectId: string;
  let manualId: string;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    projectId = (await createProject(t)).project.id;
    otherProjectId = (await createProject(t)).project.id;
    const source = await addSource(t.app, projectId, { type: 'markdown', title: 'Handbook', content: manual() });
    expect(source.status).toBe('ready');
    manualId = source.id;
    // Another project names the word in a heading; its chunks must never show up here.
    const other = await addSource(t.app, otherProjectId, { type: 'markdown', title: 'Lockers', content: '# Parcel parcel\n\n## Parcel pickup\n\nA parcel courier waits.' });
    expect(other.status).toBe('ready');
    // A re-sync in flight: chunks of a generation that is not the source's current one yet.
    await insertChunks(t.deps.store.db, [
      {
        id: newId('chunk'), project_id: projectId, source_id: manualId, generation: 'gen_unfinished', position: 0, title: 'Handbook',
        heading_path: JSON.stringify(['Parcel draft']), headings: 'Parcel draft', url: null, text: 'Parcel courier draft parcel.', embedding: null,
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('puts the chunks whose headings name a very common word first, then ranked text matches', async () => {
    const stored = await t.deps.store.db.selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('source_id', '=', manualId).executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBeGreaterThan(BROAD_MATCHES);

    const results = await searchTop(t, projectId, 'parcel', 10);
    expect(results).toHaveLength(10);
    expect(results.slice(0, 3).map((r) => r.headingPath.at(-1)).sort()).toEqual(['Parcel insurance', 'Parcel lockers', 'Parcel returns']);
    for (const r of results.slice(3)) expect(r.headingPath.at(-1)).toMatch(/^Shelf \d+$/);
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
    // Only this project's current generation.
    expect(new Set(results.map((r) => r.sourceId))).toEqual(new Set([manualId]));
    expect(results.some((r) => r.headingPath.includes('Parcel draft'))).toBe(false);
  });

  it('ranks text matches of a very common word that no heading names', async () => {
    const results = await searchTop(t, projectId, 'courier', 10);
    expect(results).toHaveLength(10);
    for (const r of results) {
      expect(r.sourceId).toBe(manualId);
      expect(r.text.toLowerCase()).toContain('courier');
      expect(r.headingPath).not.toContain('Parcel draft');
    }
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
  });

  it('a rare word with a very common one: the chunk holding both first, then the rare word over the common one', async () => {
    const results = await searchTop(t, projectId, 'parcel insurance', 5);
    expect(results[0]!.headingPath.at(-1)).toBe('Parcel insurance');
    const lockers = await searchTop(t, projectId, 'courier lockers', 5);
    expect(lockers[0]!.headingPath.at(-1)).toBe('Parcel lockers');
  });

  it('the other project still finds its own chunks for the same word', async () => {
    const results = await searchTop(t, otherProjectId, 'parcel', 10);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.headingPath.join(' ')).toMatch(/Parcel/);
    expect(results.every((r) => r.sourceId !== manualId)).toBe(true);
  });
});
