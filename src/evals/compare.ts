import type { EvalCaseResult, EvalMetrics } from './metrics.js';
import type { EvalRun } from './suites.js';

export interface EvalComparison {
  previousRunId: string;
  previousAt: string;
  /** This run minus the previous one; null where either has no figure. */
  delta: {
    hitAt3: number | null;
    mrrAt10: number | null;
    citesExpectedSource: number | null;
    keyTermsPresent: number | null;
    unanswerableDeclined: number | null;
    answeredAnyway: number;
    wronglyDeclined: number;
    passed: number;
  };
  /** Questions that passed in the previous run and fail now. */
  nowFailing: string[];
  /** Questions that failed in the previous run and pass now. */
  nowPassing: string[];
}

const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : Number((a - b).toFixed(4)));

/**
 * Each result keyed by its question and, for a question a suite asks more than once (with other
 * expectations), which time it is asked: the n-th asking of a question in one run is compared with
 * the n-th in the other.
 */
function keyed(results: readonly EvalCaseResult[]): Array<[string, EvalCaseResult]> {
  const seen = new Map<string, number>();
  return results.map((r) => {
    const n = seen.get(r.question) ?? 0;
    seen.set(r.question, n + 1);
    return [`${n}\u0000${r.question}`, r];
  });
}

/** How a run compares with the one before it; cases are matched by their question. */
export function compareRuns(current: { metrics: EvalMetrics; results: EvalCaseResult[] }, previous: EvalRun): EvalComparison {
  const m = current.metrics;
  const p = previous.metrics;
  const before = new Map(keyed(previous.results).map(([key, r]) => [key, r.passed]));
  const changed = (from: boolean) => keyed(current.results).filter(([key, r]) => before.get(key) === from && r.passed !== from).map(([, r]) => r.question);
  return {
    previousRunId: previous.id,
    previousAt: previous.createdAt,
    delta: {
      hitAt3: diff(m.hitAt3, p.hitAt3),
      mrrAt10: diff(m.mrrAt10, p.mrrAt10),
      citesExpectedSource: diff(m.citesExpectedSource, p.citesExpectedSource),
      keyTermsPresent: diff(m.keyTermsPresent, p.keyTermsPresent),
      unanswerableDeclined: diff(m.unanswerableDeclined, p.unanswerableDeclined),
      answeredAnyway: m.answeredAnyway - p.answeredAnyway,
      wronglyDeclined: m.wronglyDeclined - p.wronglyDeclined,
      passed: m.passed - p.passed,
    },
    nowFailing: changed(true),
    nowPassing: changed(false),
  };
}
