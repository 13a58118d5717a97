/**
 * One question of an answer regression test. `expectedSources` name the documents that answer it
 * (a source id, a URL or a title; any one counts); `mustContain` are key terms of the right answer.
 * `answerable: false` means the help content does not answer it: the agent should decline.
 */
export interface EvalCase {
  question: string;
  /** Default true. */
  answerable?: boolean;
  expectedSources?: string[];
  mustContain?: string[];
}

/** Bounds of what a run or a suite may hold: a run answers every case within one request. */
export const EVAL_LIMITS = {
  /** Cases per run or suite. */
  cases: 100,
  questionChars: 1000,
  /** Expected sources and key terms per case. */
  listItems: 10,
  itemChars: 2048,
  nameChars: 200,
  /** Suites per project. */
  suites: 100,
  /** Runs of a suite that are kept; older ones are deleted. */
  runsKept: 50,
} as const;
