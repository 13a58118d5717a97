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
});
