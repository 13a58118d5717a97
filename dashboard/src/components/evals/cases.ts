import type { components } from '../../api/schema';
import { parseJson } from '../kit/kit';

export type EvalCase = components['schemas']['EvalCase'];
export type EvalCaseResult = components['schemas']['EvalCaseResult'];
export type EvalMetrics = components['schemas']['EvalMetrics'];
type EvalComparison = components['schemas']['EvalComparison'];

/** The API's bounds (src/evals/cases.ts EVAL_LIMITS), so the form says them before the server does. */
export const LIMITS = { cases: 100, questionChars: 1000, nameChars: 200 } as const;
/** As the CLI: a case file is read up to 16 MiB (its annotations are dropped before anything is sent). */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** One case as the editor holds it: the lists as text, one item a line. `key` keeps a case's inputs (and errors) its own when another is removed. */
export interface CaseDraft {
  key: number;
  question: string;
  answerable: boolean;
  sources: string;
  terms: string;
}

let nextKey = 1;
const newCaseKey = (): number => nextKey++;
export const blankCase = (): CaseDraft => ({ key: newCaseKey(), question: '', answerable: true, sources: '', terms: '' });

export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

export const isBlank = (c: CaseDraft): boolean => !c.question.trim() && !lines(c.sources).length && !lines(c.terms).length;

/** The case sent for a draft: the lists only when they hold something, `answerable` only when false (the API's default is true). */
export function toCase(c: CaseDraft): EvalCase {
  const sources = lines(c.sources);
  const terms = lines(c.terms);
  return {
    question: c.question,
    ...(c.answerable ? {} : { answerable: false }),
    ...(sources.length ? { expectedSources: sources } : {}),
    ...(terms.length ? { mustContain: terms } : {}),
  };
}

type ImportResult = { ok: true; cases: CaseDraft[] } | { ok: false; error: string };

/**
 * Reads a case file as `answerdesk eval run --file` does: a JSON array of cases or `{"cases": […]}`,
 * a byte order mark allowed, and only `question`, `answerable`, `expectedSources` and `mustContain`
 * read from each case (annotated files work as they are). What cannot become a case in the form
 * (a list that is not a list of text, say) is named by its case number.
 */
export function importCases(text: string): ImportResult {
  const parsed = parseJson(text.replace(/^\uFEFF/, ''));
  if (!parsed.ok) return parsed;
  const list = Array.isArray(parsed.value) ? parsed.value : (parsed.value as { cases?: unknown } | null)?.cases;
  if (!Array.isArray(list)) return { ok: false, error: 'The JSON holds neither an array of cases nor {"cases": […]}.' };
  if (list.length === 0) return { ok: false, error: 'The JSON holds no cases.' };
  if (list.length > LIMITS.cases) return { ok: false, error: `The JSON holds ${list.length} cases; a suite takes at most ${LIMITS.cases}.` };
  const cases: CaseDraft[] = [];
  for (const [i, c] of list.entries()) {
    const where = `Case ${i + 1}`;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return { ok: false, error: `${where} is not an object such as {"question": "…"}.` };
    const { question, answerable, expectedSources, mustContain } = c as Record<string, unknown>;
    if (typeof question !== 'string') return { ok: false, error: `${where}: "question" must be text.` };
    if (answerable !== undefined && typeof answerable !== 'boolean') return { ok: false, error: `${where}: "answerable" must be true or false.` };
    const list = (value: unknown, name: string): string[] | string => {
      if (value === undefined) return [];
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return `${where}: "${name}" must be a list of texts.`;
      if (value.some((v: string) => v.includes('\n'))) return `${where}: an item of "${name}" holds a line break, which the form cannot show.`;
      return value as string[];
    };
    const sources = list(expectedSources, 'expectedSources');
    if (typeof sources === 'string') return { ok: false, error: sources };
    const terms = list(mustContain, 'mustContain');
    if (typeof terms === 'string') return { ok: false, error: terms };
    cases.push({ key: newCaseKey(), question, answerable: answerable !== false, sources: sources.join('\n'), terms: terms.join('\n') });
  }
  return { ok: true, cases };
}

/** Why a case failed, in words (as the CLI's WHY column says it); empty when it passed. */
export function whyFailed(r: EvalCaseResult): string[] {
  if (r.passed) return [];
  const why: string[] = [];
  if (r.outcome === 'error') why.push('the answer failed (the model or the search did not answer)');
  if (r.answerable && r.declined) why.push('declined, though the help content answers it');
  if (!r.answerable && !r.declined && r.outcome !== 'error') why.push('answered anyway, though the help content does not answer it');
  if (r.citesExpected === false) why.push('no expected source cited');
  if (r.missingTerms.length) why.push(`missing ${r.missingTerms.map((t) => `“${t}”`).join(', ')}`);
  return why.length ? why : ['did not pass'];
}

/** The figures of a run, in the order shown, with whether a higher value is better. */
export const METRICS: ReadonlyArray<{ key: keyof EvalMetrics & keyof EvalComparison['delta']; label: string; kind: 'rate' | 'mrr' | 'count'; higherIsBetter: boolean; hint: string }> = [
  { key: 'passed', label: 'Cases passed', kind: 'count', higherIsBetter: true, hint: 'Answerable cases found, cited and holding their key terms; unanswerable ones declined.' },
  { key: 'hitAt3', label: 'Expected source in the top 3 passages (hit@3)', kind: 'rate', higherIsBetter: true, hint: 'Answerable cases that name sources.' },
  { key: 'mrrAt10', label: 'Mean reciprocal rank (MRR@10)', kind: 'mrr', higherIsBetter: true, hint: '1 when an expected source comes first, ½ when second, … 0 when not in the top 10.' },
  { key: 'citesExpectedSource', label: 'Answer cites an expected source', kind: 'rate', higherIsBetter: true, hint: 'Answerable cases that name sources.' },
  { key: 'keyTermsPresent', label: 'Answer holds every key term', kind: 'rate', higherIsBetter: true, hint: 'Answerable cases with key terms.' },
  { key: 'unanswerableDeclined', label: 'Unanswerable questions declined', kind: 'rate', higherIsBetter: true, hint: 'Cases marked as not answered by the help content.' },
  { key: 'answeredAnyway', label: 'Unanswerable questions answered anyway', kind: 'count', higherIsBetter: false, hint: 'Made up, as far as the help content goes.' },
  { key: 'wronglyDeclined', label: 'Answerable questions declined', kind: 'count', higherIsBetter: false, hint: 'The agent said it does not know.' },
];

/** How many of a run's cases passed, as shown: "2 of 3". */
export const passedOf = (m: EvalMetrics): string => `${m.passed} of ${m.cases}`;

/** A figure as shown: a rate as a percentage, the MRR with two decimals, a count as is; a figure no case measures as "—". */
export function formatMetric(kind: 'rate' | 'mrr' | 'count', value: number | null): string {
  if (value === null) return '—';
  if (kind === 'rate') return `${Math.round(value * 1000) / 10}%`;
  if (kind === 'mrr') return value.toFixed(2);
  return String(value);
}

/** A change as shown: signed, in points for a rate; "no change" for zero. */
export function formatDelta(kind: 'rate' | 'mrr' | 'count', delta: number | null): string {
  if (delta === null) return '—';
  if (delta === 0) return 'no change';
  const sign = delta > 0 ? '+' : '−';
  const size = Math.abs(delta);
  if (kind === 'rate') return `${sign}${Math.round(size * 1000) / 10} pts`;
  if (kind === 'mrr') return `${sign}${size.toFixed(2)}`;
  return `${sign}${size}`;
}

/** Whether a change made things better or worse (null: no change, or nothing to compare). */
export function direction(delta: number | null, higherIsBetter: boolean): 'better' | 'worse' | null {
  if (delta === null || delta === 0) return null;
  return delta > 0 === higherIsBetter ? 'better' : 'worse';
}
