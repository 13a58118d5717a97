import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource, search } from '../../test/support/knowledge.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';
import { KNOWLEDGE_TOOL, knowledgeTools, type KnowledgeToolOutput } from './tool.js';

/** A long page whose every section names the question's words, and two short pages that do once. */
const HANDBOOK = [
  '# Returns handbook',
  ...['Printing', 'Paying for', 'Losing', 'Reusing', 'Changing', 'Scanning'].flatMap((verb) => [
    `## ${verb} the return label`,
    `${verb} the return label: a return label goes on the parcel. The return label has a barcode, and the return label is checked by the carrier. Keep a copy of the return label until the refund arrives.`,
  ]),
].join('\n\n');
const COURIER = '# Courier pick-up\n\nThe courier brings a return label when collecting a parcel from your home.';
const STORE = '# Returning in store\n\nNo return label is needed when you bring an item back to one of our stores.';

describe.each(dialects)('results from several pages ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let projectId: string;
  const titles = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    projectId = (await createProject(t)).project.id;
    for (const [title, content] of [['Handbook', HANDBOOK], ['Courier', COURIER], ['Store', STORE]]) {
      const source = await addSource(t.app, projectId, { type: 'markdown', title, content });
      titles.set(source.id, title!);
    }
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('puts the best passage of three pages first, then the rest by rank, scores best first', async () => {
    const { results } = await search(t.app, projectId, 'return label');
    expect(results.length).toBeGreaterThan(4);
    expect(titles.get(results[0]!.sourceId)).toBe('Handbook');
    expect(new Set(results.slice(0, 3).map((r) => titles.get(r.sourceId)))).toEqual(new Set(['Handbook', 'Courier', 'Store']));
    expect(results.slice(3).every((r) => titles.get(r.sourceId) === 'Handbook')).toBe(true);
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
  });

  it('hands the model the passages grouped by page, pages in the order search ranked them', async () => {
    const tool = knowledgeTools(t.deps.knowledge.search, projectId)[KNOWLEDGE_TOOL]!;
    const out = (await tool.execute!({ query: 'return label' }, { toolCallId: 'c', messages: [] })) as KnowledgeToolOutput;
    const pages = out.results.map((r) => titles.get(r.sourceId));
    expect(pages.length).toBeGreaterThan(3);
    // Each page's passages together: the page changes at most twice along the list.
    expect(pages.filter((p, i) => i > 0 && p !== pages[i - 1]).length).toBeLessThanOrEqual(2);
    expect(pages[0]).toBe('Handbook');
    expect(out.results.map((r) => r.n)).toEqual(out.results.map((_, i) => i + 1));
  });
});
