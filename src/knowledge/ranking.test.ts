import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerRank, loadCorpus, retrievalScores, type CorpusQuestion } from '../../test/support/corpus.js';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource, search } from '../../test/support/knowledge.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';

/** Retrieval quality on the public-domain corpus: the chunk that holds the answer must rank first. */
describe.each(dialects)('ranking ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let projectId: string;
  let questions: CorpusQuestion[];
  const sourceByDoc = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    projectId = (await createProject(t)).project.id;
    const corpus = await loadCorpus();
    questions = corpus.questions.filter((q) => !q.hard);
    for (const doc of corpus.documents) {
      const source = await addSource(t.app, projectId, { type: doc.type, title: doc.file, content: doc.content });
      expect(source.status).toBe('ready');
      sourceByDoc.set(doc.file, source.id);
    }
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('ranks the answering chunk first for every question that names its topic', async () => {
    const misses: string[] = [];
    const ranks: Array<number | null> = [];
    for (const question of questions) {
      const { results } = await search(t.app, projectId, question.q);
      const rank = answerRank(question, results, (doc) => sourceByDoc.get(doc)!);
      ranks.push(rank);
      if (rank !== 1) misses.push(`${question.q} → rank ${rank}`);
      // Scores come best first.
      expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
    }
    expect(misses).toEqual([]);
    expect(retrievalScores(ranks)).toEqual({ hitAt1: 1, hitAt3: 1, mrr: 1 });
  });

  /**
   * A reference page names each entry in a definition-list term ("shared_buffers (integer)"), a
   * heading in all but markup: the entry that defines a name ranks above prose that only mentions
   * it, however often.
   */
  it('ranks the entry a definition-list term names first', async () => {
    const projectId = (await createProject(t)).project.id;
    const page = `<html><head><title>Server settings</title></head><body><main><h1>Server settings</h1>
      <h2>Memory</h2>
      <dl>
        <dt>work_mem (integer)</dt><dd><p>Sets the base maximum amount of memory a query operation uses before writing to temporary disk files. The default is four megabytes.</p></dd>
        <dt>shared_buffers (integer)</dt><dd><p>Sets the amount of memory the database server uses for shared memory buffers. The default is typically 128 megabytes. If this value is specified without units, it is taken as blocks of 8 kB.</p></dd>
      </dl>
      <h2>Sizing a dedicated server</h2>
      <p>On a dedicated database server with 1GB or more of RAM, a reasonable starting value for shared_buffers is 25% of the memory in the system.
      Larger settings for shared_buffers usually require a larger max_wal_size. Some workloads do better with even larger shared_buffers, because
      shared_buffers holds the pages that are read most often; non-default values should be tested under load.</p>
      </main></body></html>`;
    const source = await addSource(t.app, projectId, { type: 'html', content: page });
    expect(source.status).toBe('ready');
    const { results } = await search(t.app, projectId, 'default value of shared_buffers');
    expect(results[0].headingPath).toEqual(['Server settings', 'Memory']);
    expect(results[0].text).toContain('The default is typically 128 megabytes.');
  });

  it("takes as candidates the chunks that hold a question's rare words before those that repeat its common ones", async () => {
    const projectId = (await createProject(t)).project.id;
    // Sixty sections say the question's common words again and again; one holds its rare word.
    // No chunk holds every word, so the candidates come from the later tiers, where PostgreSQL's
    // ts_rank alone (no rarity) would fill them with the sixty.
    const common = Array.from(
      { length: 60 },
      (_, i) => `## Orders ${i + 1}\n\nEvery order ships with our shipping partner. Order shipping is tracked, and tracked shipping sends an email for each order.`,
    );
    const content = ['# Delivery', ...common, '## Zeppelin delivery\n\nWe deliver orders to remote islands by zeppelin.'].join('\n\n');
    expect((await addSource(t.app, projectId, { type: 'markdown', content })).status).toBe('ready');
    const { results } = await search(t.app, projectId, 'zeppelin order shipping tracked email');
    expect(results[0].headingPath).toEqual(['Delivery', 'Zeppelin delivery']);
  });
});
