import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../fixtures/knowledge/', import.meta.url));

export interface CorpusQuestion {
  q: string;
  doc: string;
  /** The heading whose chunk answers; null when any chunk of the document does. */
  heading: string | null;
  /** Shares few words with its answer: only semantic search can be expected to rank it first. */
  hard?: boolean;
}

export interface CorpusDocument {
  file: string;
  type: 'markdown' | 'text';
  content: string;
}

/** The public-domain corpus under test/fixtures/knowledge and its question set. */
export async function loadCorpus(): Promise<{ documents: CorpusDocument[]; questions: CorpusQuestion[] }> {
  const files = ['bill-of-rights.md', 'constitution-article-1.md', 'gettysburg-address.txt', 'later-amendments.md'];
  const documents = await Promise.all(
    files.map(async (file) => ({ file, type: file.endsWith('.md') ? ('markdown' as const) : ('text' as const), content: await readFile(`${DIR}${file}`, 'utf8') })),
  );
  const questions = JSON.parse(await readFile(`${DIR}questions.json`, 'utf8')) as CorpusQuestion[];
  return { documents, questions };
}

export interface Ranked {
  sourceId: string;
  headingPath: string[];
}

/** 1-based rank of the first result that answers the question, or null. */
export function answerRank(question: CorpusQuestion, results: Ranked[], sourceOf: (doc: string) => string): number | null {
  const i = results.findIndex(
    (r) => r.sourceId === sourceOf(question.doc) && (question.heading === null || r.headingPath.includes(question.heading)),
  );
  return i < 0 ? null : i + 1;
}

/** hit@1, hit@3 and mean reciprocal rank over ranks (null = not found). */
export function retrievalScores(ranks: Array<number | null>) {
  const n = ranks.length || 1;
  return {
    hitAt1: ranks.filter((r) => r === 1).length / n,
    hitAt3: ranks.filter((r) => r !== null && r <= 3).length / n,
    mrr: ranks.reduce<number>((sum, r) => sum + (r ? 1 / r : 0), 0) / n,
  };
}
