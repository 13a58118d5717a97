import { statSync } from 'node:fs';
import pino from 'pino';
import { runEvalBody, type evalResultSchema } from '../../api/evals/schema.js';
import { runCases, runStoredEval } from '../../api/evals/service.js';
import type { EvalComparison } from '../../evals/compare.js';
import type { EvalMetrics } from '../../evals/metrics.js';
import { serializeError } from '../../lib/log-error.js';
import { nulDetails } from '../../lib/nul.js';
import { getProject } from '../../projects/projects.js';
import { flatText, nonBlankOption, option, parseCommand, parseInput, printJson, printTable, printText, readTextFile, required, withDeps } from './shared.js';
import { printUsage, subcommandGroup, UsageError } from './types.js';
import type { z } from 'zod';

const usage = `Usage:
  answerdesk eval run --project <projectId> (--file <cases.json> | --eval <evalId>)
                      [--min-hit3 <0..1>] [--min-mrr <0..1>] [--min-cites <0..1>] [--min-terms <0..1>]
                      [--min-declined <0..1>] [--max-fabricated <n>] [--max-wrongly-declined <n>] [--json]

Runs question cases through retrieval and the agent, as POST /api/v1/admin/projects/{id}/evals/run
does: nothing is stored and no action is called. --file takes a JSON array of cases (or {"cases": […]}),
each {question, answerable?, expectedSources?, mustContain?}; other fields of a case are ignored, so
annotated case files work as they are ("-" reads standard input). --eval runs a saved suite instead,
stores the run and prints how it compares with the previous run.

Prints one line per case and the metrics. The thresholds make it a CI check: the command exits 1
when a metric is below its --min-… (or has no value because no case measures it) or a count is above
its --max-…, naming each one, or when an answer failed (the model or the search down: a failed
answer is neither declined nor answered anyway, so it would pass every threshold); 0 otherwise. --max-fabricated bounds the unanswerable cases answered
anyway. --json prints the API's JSON instead of the table (the exit code is the same).
Works directly on the database named by DATABASE_URL, with the model the project is set to.
`;

type EvalResult = z.infer<typeof evalResultSchema>;

const THRESHOLDS = [
  ['min-hit3', 'hitAt3', 'min'],
  ['min-mrr', 'mrrAt10', 'min'],
  ['min-cites', 'citesExpectedSource', 'min'],
  ['min-terms', 'keyTermsPresent', 'min'],
  ['min-declined', 'unanswerableDeclined', 'min'],
  ['max-fabricated', 'answeredAnyway', 'max'],
  ['max-wrongly-declined', 'wronglyDeclined', 'max'],
] as const;

/** The threshold breaches, one sentence each; empty when the run passes. */
export function breaches(metrics: EvalMetrics, limits: Partial<Record<(typeof THRESHOLDS)[number][0], number>>): string[] {
  const out: string[] = [];
  for (const [flag, key, kind] of THRESHOLDS) {
    const limit = limits[flag];
    if (limit === undefined) continue;
    const value = metrics[key];
    if (value === null) out.push(`${key} has no value (no case measures it), --${flag} ${limit}`);
    else if (kind === 'min' && value < limit) out.push(`${key} ${value} is below --${flag} ${limit}`);
    else if (kind === 'max' && value > limit) out.push(`${key} ${value} is above --${flag} ${limit}`);
  }
  return out;
}

/**
 * The largest case file read: annotated files carry more than their cases (ids, tags, notes), which
 * are dropped before the cases are held to the API's 1 MiB (EVAL_BODY_LIMIT).
 */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MAX_CASES_BYTES = 1024 * 1024;

function readCases(path: string): unknown {
  let text: string;
  try {
    if (path !== '-' && statSync(path).size > MAX_FILE_BYTES) throw new UsageError(`--file ${path} is larger than 16 MiB`, usage);
    text = readTextFile(path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`Cannot read --file ${path}`, usage);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--file ${path} is not valid JSON`, usage);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { cases?: unknown } | null)?.cases;
  if (!Array.isArray(list)) throw new UsageError(`--file ${path} holds neither an array of cases nor {"cases": […]}`, usage);
  // Annotated case files carry ids, tags and the like: only the fields of a case are read.
  const cases = list.map((c) => {
    if (typeof c !== 'object' || c === null) return c;
    const { question, answerable, expectedSources, mustContain } = c as Record<string, unknown>;
    return Object.fromEntries(Object.entries({ question, answerable, expectedSources, mustContain }).filter(([, v]) => v !== undefined));
  });
  // What the API refuses, the CLI refuses: text it cannot store, and more than its body limit.
  const bad = nulDetails(cases).map((d) => `cases.${d.path} ${d.message}`);
  if (bad.length > 0) throw new UsageError(`Invalid cases in ${path}: ${bad.join('; ')}`, usage);
  if (Buffer.byteLength(JSON.stringify({ cases })) > MAX_CASES_BYTES) throw new UsageError(`The cases in --file ${path} are more than 1 MiB, the most one run takes`, usage);
  return cases;
}

const fmt = (v: number | null) => (v === null ? '-' : String(v));
const signed = (v: number | null) => (v === null ? '-' : v > 0 ? `+${v}` : String(v));

function printRun(result: EvalResult, comparison: EvalComparison | null | undefined): void {
  printTable(
    ['#', 'RESULT', 'RANK', 'OUTCOME', 'QUESTION', 'WHY'],
    result.results.map((r, i) => {
      const why = r.passed
        ? ''
        : [
            r.answerable && r.declined ? 'declined' : '',
            !r.answerable && !r.declined && r.outcome !== 'error' ? 'answered anyway' : '',
            r.citesExpected === false ? 'expected source not cited' : '',
            r.missingTerms.length ? `missing ${r.missingTerms.map((t) => JSON.stringify(t)).join(', ')}` : '',
            r.outcome === 'error' ? 'failed' : '',
          ].filter(Boolean).join('; ');
      return [String(i + 1), r.passed ? 'pass' : 'FAIL', r.rank === null ? '-' : String(r.rank), r.outcome, flatText(r.question, 60), flatText(why, 80)];
    }),
  );
  const m = result.metrics;
  const d = comparison?.delta;
  const line = (label: string, value: string, delta?: string) => `  ${label.padEnd(34)}${value}${delta && d ? `  (${delta})` : ''}`;
  printText(
    [
      '',
      `Model ${result.model}: ${m.passed}/${m.cases} passed (${m.answerable} answerable, ${m.unanswerable} unanswerable)`,
      line('retrieval hit@3', fmt(m.hitAt3), signed(d?.hitAt3 ?? null)),
      line('MRR@10', fmt(m.mrrAt10), signed(d?.mrrAt10 ?? null)),
      line('answer cites an expected source', fmt(m.citesExpectedSource), signed(d?.citesExpectedSource ?? null)),
      line('key terms present', fmt(m.keyTermsPresent), signed(d?.keyTermsPresent ?? null)),
      line('unanswerable declined', fmt(m.unanswerableDeclined), signed(d?.unanswerableDeclined ?? null)),
      line('unanswerable answered anyway', `${m.answeredAnyway}/${m.unanswerable}`, signed(d?.answeredAnyway ?? null)),
      line('answerable wrongly declined', `${m.wronglyDeclined}/${m.answerable}`, signed(d?.wronglyDeclined ?? null)),
      ...(comparison
        ? [
            `Compared with run ${comparison.previousRunId} (${comparison.previousAt}):${
              comparison.nowFailing.length + comparison.nowPassing.length === 0 ? ' every question has the same result' : ''
            }`,
            ...comparison.nowFailing.map((q) => `  now failing: ${q}`),
            ...comparison.nowPassing.map((q) => `  now passing: ${q}`),
          ]
        : []),
      '',
    ].join('\n'),
  );
}

function limitOption(cmd: ReturnType<typeof parseCommand>, flag: string, kind: 'min' | 'max'): number | undefined {
  const raw = option(cmd, flag);
  if (raw === undefined) return undefined;
  // Written as decimals: Number() would also take "0x1", "1e0" or "".
  const n = Number(raw);
  const ok = (kind === 'min' ? /^\s*(\d+(\.\d*)?|\.\d+)\s*$/ : /^\s*\d+\s*$/).test(raw) && (kind === 'min' ? n <= 1 : Number.isSafeInteger(n));
  if (!ok) throw new UsageError(`--${flag} must be ${kind === 'min' ? 'a number from 0 to 1' : 'a whole number'}`, usage);
  return n;
}

async function run(args: string[]): Promise<number> {
  const flags = Object.fromEntries(THRESHOLDS.map(([flag]) => [flag, { type: 'string' as const }]));
  const cmd = parseCommand(args, { project: { type: 'string' }, file: { type: 'string' }, eval: { type: 'string' }, json: { type: 'boolean' }, ...flags }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const file = nonBlankOption(cmd, 'file', usage);
  const evalId = nonBlankOption(cmd, 'eval', usage);
  if ((file === undefined) === (evalId === undefined)) throw new UsageError('Give either --file or --eval', usage);
  const limits = Object.fromEntries(THRESHOLDS.map(([flag, , kind]) => [flag, limitOption(cmd, flag, kind)]));
  const cases = file === undefined ? null : parseInput(runEvalBody, { cases: readCases(file) }, usage, `cases in ${file}`).cases;
  // Answers log their failures (a model that is down) on standard error, never between the table lines.
  // As the server logs them: by what went wrong, never the prompt or the request body they were about.
  const log = pino({ level: 'warn', serializers: { err: serializeError } }, pino.destination(2));
  const { result, comparison, api } = await withDeps(async (deps) => {
    const project = await getProject(deps.store.db, projectId);
    if (cases) {
      const ran = await runCases(deps, project, cases, log);
      return { result: ran, comparison: undefined, api: ran };
    }
    const stored = await runStoredEval(deps, project, evalId!, log);
    return { result: { model: stored.run.model, metrics: stored.run.metrics, results: stored.run.results }, comparison: stored.comparison, api: stored };
  });
  // --json prints what the matching admin API route answers: POST …/evals/run, or …/evals/{evalId}/run.
  if (cmd.values.json) printJson(api);
  else printRun(result, comparison);
  const failed = breaches(result.metrics, limits);
  for (const f of failed) process.stderr.write(`Threshold not met: ${f}\n`);
  // A failed answer (the model or the search down) measures nothing: the run cannot pass as a check.
  const errors = result.results.filter((r) => r.outcome === 'error').length;
  if (errors > 0) process.stderr.write(`${errors} of ${result.results.length} answers failed, so the run measures nothing for them\n`);
  return failed.length > 0 || errors > 0 ? 1 : 0;
}

export const evalCommands = subcommandGroup({
  name: 'eval',
  usage,
  subcommands: { run },
});
