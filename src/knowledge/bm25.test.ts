import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource, search } from '../../test/support/knowledge.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';
import { EMPTY_LEXICON, type Lexicon } from './search/lexicon.js';
import { bm25f, chunkTerms, groupWeight, stemGroups } from './search/rerank.js';
import type { KnowledgeHit } from './types.js';

const hit = (text: string, title = 'Page', headingPath: string[] = []): KnowledgeHit => ({
  chunkId: `chunk_${Math.random()}`,
  sourceId: 'src_1',
  title,
  url: null,
  headingPath,
  text,
  score: 0,
});

/** A project of 100 chunks where "locker" is rare and "parcel" common, chunks 10 terms long. */
const lexicon: Lexicon = { ...EMPTY_LEXICON, size: 100, chunks: 100, avgLength: 10, df: new Map([['parcel', 60], ['locker', 3]]) };
const score = (h: KnowledgeHit, question: string[][][]) =>
  bm25f(chunkTerms(h), stemGroups(question), question.map((g) => groupWeight(lexicon, g)), lexicon.avgLength);

describe('BM25F in the reranking', () => {
  it('weighs a rare term of the project more than a common one', () => {
    const question = [[['parcel']], [['locker']]];
    expect(score(hit('the locker was full, so a courier kept it'), question)).toBeGreaterThan(score(hit('the parcel was full, so a courier kept it'), question));
  });

  it('weighs a term in a heading more than in the title, and in the title more than in the text', () => {
    const question = [[['locker']]];
    const inHeading = score(hit('open it with the code sent by text message', 'Page', ['Locker']), question);
    const inTitle = score(hit('open it with the code sent by text message', 'Locker'), question);
    const inText = score(hit('open the locker with the code sent by text message'), question);
    expect(inHeading).toBeGreaterThan(inTitle);
    expect(inTitle).toBeGreaterThan(inText);
    expect(inText).toBeGreaterThan(0);
  });

  it('saturates repeated occurrences and discounts longer chunks', () => {
    const question = [[['locker']]];
    const once = score(hit('locker code'), question);
    expect(score(hit('locker locker locker locker locker code'), question)).toBeLessThan(5 * once);
    expect(score(hit('locker locker code'), question)).toBeGreaterThan(once);
    // The same occurrence in a chunk three times the project's average length counts less.
    expect(score(hit(`locker code ${'station '.repeat(30)}`), question)).toBeLessThan(once);
  });

  it("counts a phrase only where its words follow each other, and any of a group's alternatives", () => {
    const question = [[['parcel', 'locker'], ['pickup', 'point']]];
    expect(score(hit('a locker holds the parcel'), question)).toBe(0);
    expect(score(hit('use a parcel locker'), question)).toBeGreaterThan(0);
    expect(score(hit('use a parcel locker or a pickup point'), question)).toBeGreaterThan(score(hit('use a parcel locker or a pickup'), question));
  });

  it('scores nothing for a chunk without the question terms', () => {
    expect(score(hit('nothing of the kind'), [[['locker']]])).toBe(0);
  });
});

/**
 * Two pages that both hold "alpha" and "beta": one mostly about alpha, one mostly about beta, and a
 * third that holds only beta, so in this project alpha is the rarer word and the alpha page ranks
 * first. Another project then adds many chunks holding alpha (and none holding beta).
 */
const PAGES: Array<[string, string]> = [
  ['Alpha page', '# Notes one\n\nThe alpha setting, and the alpha switch next to it, control the alpha mode; beta is named once.'],
  ['Beta page', '# Notes two\n\nThe beta setting, and the beta switch next to it, control the beta mode; alpha is named once.'],
  ['Other page', '# Notes three\n\nA beta release is published every month.'],
];

describe.each(dialects)("a project's ranking is its own ($name)", (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it("does not change when another project's content is added", async () => {
    const projectId = (await createProject(t)).project.id;
    const titles = new Map<string, string>();
    for (const [title, content] of PAGES) titles.set((await addSource(t.app, projectId, { type: 'markdown', title, content })).id, title);
    const before = (await search(t.app, projectId, 'alpha beta')).results;
    expect(before.map((r) => titles.get(r.sourceId))).toEqual(['Alpha page', 'Beta page', 'Other page']);

    const other = (await createProject(t, undefined, 'Other tenant')).project.id;
    const lines = Array.from({ length: 40 }, (_, i) => `## Entry ${i}\n\nThe alpha value of entry ${i} is ${i * 7}.`);
    const added = await addSource(t.app, other, { type: 'markdown', title: 'Alpha values', content: `# Alpha values\n\n${lines.join('\n\n')}` });
    expect(added.chunkCount).toBeGreaterThan(5);

    const after = (await search(t.app, projectId, 'alpha beta')).results;
    expect(after.map((r) => [r.chunkId, r.score])).toEqual(before.map((r) => [r.chunkId, r.score]));
  });
});
