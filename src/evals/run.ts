import type { FastifyBaseLogger } from 'fastify';
import { answerOnce } from '../agent/answer-once.js';
import type { FinishedAnswer } from '../agent/answer.js';
import { modelSpecFor } from '../agent/models.js';
import type { AgentDeps } from '../agent/tools.js';
import { searchWithSources, type SourcedHit } from '../knowledge/sources.js';
import type { Project } from '../projects/project.js';
import type { EvalCase } from './cases.js';
import { casePassed, computeMetrics, missingTerms, type EvalCaseResult, type EvalMetrics } from './metrics.js';

/** Passages retrieved per case: MRR is computed over the top 10. */
const RETRIEVAL_DEPTH = 10;
/** Cases answered at once: enough to keep a remote model busy, few enough not to flood it. */
const CONCURRENCY = 4;

export interface EvalOutcome {
  /** The model spec the answers came from. */
  model: string;
  results: EvalCaseResult[];
  metrics: EvalMetrics;
}

/** What a source reference can be matched on. */
interface SourceRef {
  sourceId: string;
  title: string | null;
  url: string | null;
}

/**
 * An http(s) URL as compared (no fragment, no trailing slash), or null for anything else: a title
 * such as "FAQ: Shipping" parses as a URL of scheme `faq:` and must still be compared as a title.
 */
function comparableUrl(text: string): string | null {
  if (!/^https?:\/\//i.test(text.trim())) return null;
  try {
    const u = new URL(text.trim());
    u.hash = '';
    return u.href.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

const comparableTitle = (text: string) => text.trim().toLowerCase().replace(/\s+/g, ' ');

/** Whether `ref` is one of the expected sources, named by source id, URL or title. */
export function isExpectedSource(expected: readonly string[], ref: SourceRef): boolean {
  return expected.some((e) => {
    if (e === ref.sourceId) return true;
    const url = comparableUrl(e);
    if (url) return ref.url !== null && comparableUrl(ref.url) === url;
    return ref.title !== null && comparableTitle(ref.title) === comparableTitle(e);
  });
}

/** The ways one retrieved passage can be named: its source's id and title, the chunk's title and URL. */
function hitRefs(hit: SourcedHit): SourceRef[] {
  return [
    { sourceId: hit.sourceId, title: hit.source.title, url: hit.url },
    { sourceId: hit.sourceId, title: hit.title, url: null },
  ];
}

/**
 * Runs every case through retrieval (the knowledge search the agent uses, top 10) and through the
 * agent (see answerOnce: nothing is stored, no action is called), then scores them. `onAnswer` sees
 * each finished answer (e.g. to count the model tokens the run spent).
 */
export async function runEval(
  deps: AgentDeps,
  project: Project,
  cases: readonly EvalCase[],
  log: FastifyBaseLogger,
  onAnswer: (answer: FinishedAnswer) => void = () => {},
): Promise<EvalOutcome> {
  const results: EvalCaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCase(deps, project, cases[i]!, log, onAnswer);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, cases.length) }, worker));
  return { model: modelSpecFor(project, deps.config), results, metrics: computeMetrics(cases, results) };
}

async function runCase(
  deps: AgentDeps,
  project: Project,
  c: EvalCase,
  log: FastifyBaseLogger,
  onAnswer: (answer: FinishedAnswer) => void,
): Promise<EvalCaseResult> {
  const expected = c.expectedSources ?? [];
  const [hits, answer] = await Promise.all([
    expected.length > 0 ? searchWithSources(deps, project.id, c.question, RETRIEVAL_DEPTH) : Promise.resolve([]),
    answerOnce(deps, project, c.question, log),
  ]);
  onAnswer(answer);
  const at = hits.findIndex((h) => hitRefs(h).some((ref) => isExpectedSource(expected, ref)));
  const cited = answer.sources.map((s) => ({ sourceId: s.sourceId, title: s.title, url: s.url ?? null }));
  const partial = {
    rank: at >= 0 ? at + 1 : null,
    outcome: answer.outcome,
    answer: answer.content,
    cited,
    citesExpected: expected.length > 0 ? cited.some((s) => isExpectedSource(expected, s)) : null,
    missingTerms: missingTerms(answer.content, c.mustContain ?? []),
    declined: answer.outcome === 'declined' && cited.length === 0,
  };
  return { question: c.question, answerable: c.answerable !== false, ...partial, passed: casePassed(c, partial) };
}
