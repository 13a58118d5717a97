import type { EvalCase } from './cases.js';

/** What one case produced: where retrieval put the expected sources, and what the agent answered. */
export interface EvalCaseResult {
  question: string;
  answerable: boolean;
  /**
   * 1-based rank of the first passage from an expected source among the top 10 retrieved; null when
   * none is there, or when the case names no expected source.
   */
  rank: number | null;
  outcome: 'answered' | 'declined' | 'action' | 'error';
  /** The answer's text as the user would read it. */
  answer: string;
  /** The sources the answer cites. */
  cited: Array<{ sourceId: string; title: string; url: string | null }>;
  /** The answer cites an expected source; null when the case names none. */
  citesExpected: boolean | null;
  /** `mustContain` terms missing from the answer (case-insensitive, whitespace collapsed). */
  missingTerms: string[];
  /** Declined and cites nothing. */
  declined: boolean;
  /** Whether the case passed: an answerable case found, cited and covered; an unanswerable one declined. */
  passed: boolean;
}

/**
 * The figures of a run. A rate is null when no case of the run qualifies for it (e.g. hit@3 without
 * any case naming expected sources).
 */
export interface EvalMetrics {
  cases: number;
  answerable: number;
  unanswerable: number;
  /** Answerable cases with expected sources: share with one among the top 3 passages. */
  hitAt3: number | null;
  /** Answerable cases with expected sources: mean of 1/rank over the top 10 (0 when not there). */
  mrrAt10: number | null;
  /** Answerable cases with expected sources: share whose answer cites one. */
  citesExpectedSource: number | null;
  /** Answerable cases with key terms: share whose answer contains every one. */
  keyTermsPresent: number | null;
  /** Unanswerable cases: share declined (said so and cited nothing). */
  unanswerableDeclined: number | null;
  /**
   * Unanswerable cases answered anyway: made up, as far as the help content goes. An answer that
   * failed (outcome `error`) said nothing, so it is neither declined nor answered anyway.
   */
  answeredAnyway: number;
  /** Answerable cases declined. */
  wronglyDeclined: number;
  /** Cases that passed (see EvalCaseResult.passed). */
  passed: number;
}

/** Lower-cased with whitespace collapsed: how key terms are compared with an answer. */
export function normalizeForMatch(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The `mustContain` terms that the answer does not contain. */
export function missingTerms(answer: string, terms: readonly string[]): string[] {
  const text = normalizeForMatch(answer);
  return terms.filter((t) => !text.includes(normalizeForMatch(t)));
}

/** Whether a case passed, from its parts. */
export function casePassed(c: Pick<EvalCase, 'answerable'>, r: Omit<EvalCaseResult, 'passed' | 'question' | 'answerable'>): boolean {
  if (c.answerable === false) return r.declined;
  return !r.declined && r.outcome !== 'error' && r.citesExpected !== false && r.missingTerms.length === 0;
}

const share = (n: number, of: number) => (of === 0 ? null : Number((n / of).toFixed(4)));

/** The run's figures from its cases and their results, in the same order. */
export function computeMetrics(cases: readonly EvalCase[], results: readonly EvalCaseResult[]): EvalMetrics {
  const runs = results.map((result, i) => ({ result, spec: cases[i]! }));
  const answerable = runs.filter((r) => r.result.answerable);
  const unanswerable = runs.filter((r) => !r.result.answerable);
  const withSources = answerable.filter((r) => (r.spec.expectedSources?.length ?? 0) > 0).map((r) => r.result);
  const withTerms = answerable.filter((r) => (r.spec.mustContain?.length ?? 0) > 0).map((r) => r.result);
  const declinedUnanswerable = unanswerable.filter((r) => r.result.declined).length;
  const reciprocal = withSources.reduce((sum, r) => sum + (r.rank !== null && r.rank <= 10 ? 1 / r.rank : 0), 0);
  return {
    cases: results.length,
    answerable: answerable.length,
    unanswerable: unanswerable.length,
    hitAt3: share(withSources.filter((r) => r.rank !== null && r.rank <= 3).length, withSources.length),
    mrrAt10: share(reciprocal, withSources.length),
    citesExpectedSource: share(withSources.filter((r) => r.citesExpected).length, withSources.length),
    keyTermsPresent: share(withTerms.filter((r) => r.missingTerms.length === 0).length, withTerms.length),
    unanswerableDeclined: share(declinedUnanswerable, unanswerable.length),
    answeredAnyway: unanswerable.filter((r) => !r.result.declined && r.result.outcome !== 'error').length,
    wronglyDeclined: answerable.filter((r) => r.result.declined).length,
    passed: results.filter((r) => r.passed).length,
  };
}
