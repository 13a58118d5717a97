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

/** How a run compares with the one before it; cases are matched by their question. */
export function compareRuns(current: { metrics: EvalMetrics; results: EvalCaseResult[] }, previous: EvalRun): EvalComparison {
  const m = current.metrics;
  const p = previous.metrics;
  const before = new Map(previous.results.map((r) => [r.question, r.passed]));
  const changed = (from: boolean) => current.results.filter((r) => before.get(r.question) === from && r.passed !== from).map((r) => r.question);
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
