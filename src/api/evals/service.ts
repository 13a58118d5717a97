import type { FastifyBaseLogger } from 'fastify';
import type { FinishedAnswer } from '../../agent/answer.js';
import type { AppDeps } from '../../deps.js';
import type { EvalCase } from '../../evals/cases.js';
import { compareRuns, type EvalComparison } from '../../evals/compare.js';
import { runEval, type EvalOutcome } from '../../evals/run.js';
import { createSuite, getRun, getSuite, listRuns, listSuites, previousRun, recordRun, type EvalRun, type EvalSuite } from '../../evals/suites.js';
import type { Project } from '../../projects/project.js';

const summary = (r: EvalRun) => ({ id: r.id, model: r.model, metrics: r.metrics, createdAt: r.createdAt });

/** The tokens an eval answer spent go into the node's model-token series, as a chat answer's do. */
const countTokens = (deps: AppDeps, project: Project) => (answer: FinishedAnswer) => {
  if (answer.usage) deps.metrics.modelTokens(project.id, answer.model, answer.usage.inputTokens, answer.usage.outputTokens);
};

/** Runs cases once; nothing is stored. */
export async function runCases(deps: AppDeps, project: Project, cases: EvalCase[], log: FastifyBaseLogger): Promise<EvalOutcome> {
  return runEval(deps, project, cases, log, countTokens(deps, project));
}

export async function createEval(deps: AppDeps, project: Project, input: { name: string; cases: EvalCase[] }) {
  return { ...(await createSuite(deps.store.db, project.id, input)), runs: [] };
}

/** A suite with its stored runs (summaries, newest first). */
export async function getEval(deps: AppDeps, project: Project, evalId: string) {
  const suite = await getSuite(deps.store.db, project.id, evalId);
  return { ...suite, runs: (await listRuns(deps.store.db, suite.id)).map(summary) };
}

export async function listEvals(deps: AppDeps, project: Project) {
  const suites = await listSuites(deps.store.db, project.id);
  return Promise.all(
    suites.map(async (s: EvalSuite) => {
      const [last] = await listRuns(deps.store.db, s.id, 1);
      return { id: s.id, name: s.name, caseCount: s.cases.length, createdAt: s.createdAt, updatedAt: s.updatedAt, lastRun: last ? summary(last) : null };
    }),
  );
}

/** Runs a stored suite, keeps the run, and compares it with the run before it. */
export async function runStoredEval(
  deps: AppDeps,
  project: Project,
  evalId: string,
  log: FastifyBaseLogger,
): Promise<{ run: EvalRun; comparison: EvalComparison | null }> {
  const suite = await getSuite(deps.store.db, project.id, evalId);
  const [previous] = await listRuns(deps.store.db, suite.id, 1);
  const outcome = await runEval(deps, project, suite.cases, log, countTokens(deps, project));
  const run = await recordRun(deps.store.db, suite, outcome);
  return { run, comparison: previous ? compareRuns(run, previous) : null };
}

/** A stored run with its per-case results, compared with the run of the suite before it. */
export async function getEvalRun(deps: AppDeps, project: Project, evalId: string, runId: string): Promise<{ run: EvalRun; comparison: EvalComparison | null }> {
  const suite = await getSuite(deps.store.db, project.id, evalId);
  const run = await getRun(deps.store.db, suite.id, runId);
  const previous = await previousRun(deps.store.db, run);
  return { run, comparison: previous ? compareRuns(run, previous) : null };
}
