import type { Kysely, Selectable } from 'kysely';
import { Conflict, NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { projectGone, type Database } from '../store/index.js';
import { lockKey, lockRow } from '../store/lock.js';
import type { EvalRunsTable, EvalSuitesTable } from '../store/schema.js';
import { EVAL_LIMITS, type EvalCase } from './cases.js';
import type { EvalOutcome } from './run.js';
import type { EvalCaseResult, EvalMetrics } from './metrics.js';

type Db = Kysely<Database>;
export type EvalSuiteRow = Selectable<EvalSuitesTable>;
export type EvalRunRow = Selectable<EvalRunsTable>;

/** A suite as the core hands it out: its cases parsed. */
export interface EvalSuite {
  id: string;
  projectId: string;
  name: string;
  cases: EvalCase[];
  createdAt: string;
  updatedAt: string;
}

/** A stored run of a suite. */
export interface EvalRun {
  id: string;
  evalId: string;
  model: string;
  metrics: EvalMetrics;
  results: EvalCaseResult[];
  createdAt: string;
}

const toSuite = (r: EvalSuiteRow): EvalSuite => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  cases: JSON.parse(r.cases) as EvalCase[],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRun = (r: EvalRunRow): EvalRun => ({
  id: r.id,
  evalId: r.eval_id,
  model: r.model,
  metrics: JSON.parse(r.metrics) as EvalMetrics,
  results: JSON.parse(r.results) as EvalCaseResult[],
  createdAt: r.created_at,
});

/** Stores a named set of cases (already validated by the caller's schema). */
export async function createSuite(db: Db, projectId: string, input: { name: string; cases: EvalCase[] }): Promise<EvalSuite> {
  const at = now();
  const row: EvalSuiteRow = { id: newId('eval'), project_id: projectId, name: input.name, cases: JSON.stringify(input.cases), created_at: at, updated_at: at };
  // The count and the insert under one lock per project: suites created at once stop at the cap.
  await db.transaction().execute(async (trx) => {
    await lockKey(trx, `eval-suites:${projectId}`);
    const count = await trx.selectFrom('eval_suites').select((eb) => eb.fn.countAll().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
    if (Number(count.n) >= EVAL_LIMITS.suites) throw Conflict(`A project can keep at most ${EVAL_LIMITS.suites} eval suites; delete one first`);
    await trx.insertInto('eval_suites').values(row).execute();
  }).catch((err: unknown) => {
    // The project was deleted since the route found it.
    throw projectGone(err);
  });
  return toSuite(row);
}

/** The project's suites, newest first. */
export async function listSuites(db: Db, projectId: string): Promise<EvalSuite[]> {
  const rows = await db.selectFrom('eval_suites').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toSuite);
}

/** A suite of the project, or 404. */
export async function getSuite(db: Db, projectId: string, evalId: string): Promise<EvalSuite> {
  const row = await db.selectFrom('eval_suites').selectAll().where('id', '=', evalId).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw NotFound('Eval not found');
  return toSuite(row);
}

/** Deletes a suite and its runs. */
export async function deleteSuite(db: Db, projectId: string, evalId: string): Promise<void> {
  await getSuite(db, projectId, evalId);
  await db.transaction().execute(async (trx) => {
    // Two deletes at once: the second finds it gone (404), as it would one after the other.
    if (!(await lockRow(trx, 'eval_suites', evalId))) throw NotFound('Eval not found');
    await trx.deleteFrom('eval_runs').where('eval_id', '=', evalId).execute();
    await trx.deleteFrom('eval_suites').where('id', '=', evalId).execute();
  });
}

/** The newest `limit` runs of a suite, newest first. */
export async function listRuns(db: Db, evalId: string, limit: number = EVAL_LIMITS.runsKept): Promise<EvalRun[]> {
  const rows = await db.selectFrom('eval_runs').selectAll().where('eval_id', '=', evalId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toRun);
}

/** A stored run of the suite, or 404 (also for a run of another suite, or one no longer kept). */
export async function getRun(db: Db, evalId: string, runId: string): Promise<EvalRun> {
  const row = await db.selectFrom('eval_runs').selectAll().where('id', '=', runId).where('eval_id', '=', evalId).executeTakeFirst();
  if (!row) throw NotFound('Eval run not found');
  return toRun(row);
}

/** The run of the same suite stored just before `run` (in listRuns' order), if it is still kept. */
export async function previousRun(db: Db, run: EvalRun): Promise<EvalRun | null> {
  const row = await db
    .selectFrom('eval_runs')
    .selectAll()
    .where('eval_id', '=', run.evalId)
    .where((eb) => eb.or([eb('created_at', '<', run.createdAt), eb.and([eb('created_at', '=', run.createdAt), eb('id', '<', run.id)])]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? toRun(row) : null;
}

/** Stores a run of a suite; only the newest EVAL_LIMITS.runsKept runs are kept. */
export async function recordRun(db: Db, suite: EvalSuite, outcome: EvalOutcome): Promise<EvalRun> {
  const row: EvalRunRow = {
    id: newId('evrun'),
    eval_id: suite.id,
    project_id: suite.projectId,
    model: outcome.model,
    metrics: JSON.stringify(outcome.metrics),
    results: JSON.stringify(outcome.results),
    created_at: now(),
  };
  // Under the suite's lock: a suite deleted while it ran is gone (404), and its runs with it.
  await db.transaction().execute(async (trx) => {
    if (!(await lockRow(trx, 'eval_suites', suite.id))) throw NotFound('Eval not found');
    await trx.insertInto('eval_runs').values(row).execute();
    const old = await trx
      .selectFrom('eval_runs')
      .select('id')
      .where('eval_id', '=', suite.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(EVAL_LIMITS.runsKept)
      .limit(1000)
      .execute();
    if (old.length > 0) await trx.deleteFrom('eval_runs').where('id', 'in', old.map((r) => r.id)).execute();
  });
  return toRun(row);
}
