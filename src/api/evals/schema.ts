import { z } from 'zod';
import { EVAL_LIMITS } from '../../evals/cases.js';
import { projectParams } from '../projects/admin-schema.js';

const item = z.string().trim().min(1).max(EVAL_LIMITS.itemChars);

export const evalCaseSchema = z
  .object({
    question: z.string().trim().min(1).max(EVAL_LIMITS.questionChars).describe('What a customer asks.'),
    answerable: z.boolean().optional().describe('false: the help content does not answer it and the agent should decline. Default true.'),
    expectedSources: z
      .array(item)
      .max(EVAL_LIMITS.listItems)
      .optional()
      .describe('Sources that answer it, each by source id (`ks_…`), URL or title; any one of them counts.'),
    mustContain: z
      .array(item)
      .max(EVAL_LIMITS.listItems)
      .optional()
      .describe('Key terms of the right answer; matched case-insensitively with whitespace collapsed.'),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.answerable !== false) return;
    for (const key of ['expectedSources', 'mustContain'] as const) {
      if (c[key]?.length) ctx.addIssue({ code: 'custom', path: [key], message: 'an unanswerable case (answerable: false) has no expected sources or key terms' });
    }
  })
  .meta({ id: 'EvalCase', description: 'One question of an answer regression test.' });

const cases = z.array(evalCaseSchema).min(1).max(EVAL_LIMITS.cases).describe(`1 to ${EVAL_LIMITS.cases} cases.`);

export const runEvalBody = z.object({ cases }).strict().meta({ id: 'RunEvalRequest', description: 'Cases to run once; nothing is stored.' });

export const createEvalBody = z
  .object({ name: z.string().trim().min(1).max(EVAL_LIMITS.nameChars).describe('e.g. "Returns and refunds"'), cases })
  .strict()
  .meta({ id: 'CreateEvalRequest', description: 'A named suite of cases, kept so that its runs can be compared.' });

const rate = z.number().nullable();

export const evalMetricsSchema = z
  .object({
    cases: z.number().int(),
    answerable: z.number().int(),
    unanswerable: z.number().int(),
    hitAt3: rate.describe('Answerable cases with expected sources: share with one among the top 3 retrieved passages. Null when no case names sources.'),
    mrrAt10: rate.describe('Same cases: mean reciprocal rank of the first expected source in the top 10 (0 when absent).'),
    citesExpectedSource: rate.describe('Same cases: share whose answer cites an expected source.'),
    keyTermsPresent: rate.describe('Answerable cases with key terms: share whose answer contains every one.'),
    unanswerableDeclined: rate.describe('Unanswerable cases: share the agent declined (said it does not know, cited nothing).'),
    answeredAnyway: z.number().int().describe('Unanswerable cases answered anyway (fabricated, as far as the help content goes); a failed answer (outcome `error`) is not counted.'),
    wronglyDeclined: z.number().int().describe('Answerable cases the agent declined.'),
    passed: z.number().int().describe('Cases that passed: answerable ones found, cited and covering their key terms; unanswerable ones declined.'),
  })
  .meta({ id: 'EvalMetrics', description: 'The figures of a run.' });

export const evalCaseResultSchema = z
  .object({
    question: z.string(),
    answerable: z.boolean(),
    rank: z.number().int().nullable().describe('1-based rank of the first passage from an expected source among the top 10 retrieved; null when absent or none expected.'),
    outcome: z.enum(['answered', 'declined', 'action', 'error']),
    answer: z.string().describe("The agent's answer text."),
    cited: z.array(z.object({ sourceId: z.string(), title: z.string(), url: z.string().nullable() })).describe('Sources the answer cites.'),
    citesExpected: z.boolean().nullable().describe('The answer cites an expected source; null when none is named.'),
    missingTerms: z.array(z.string()).describe('Key terms the answer lacks.'),
    declined: z.boolean().describe('The agent declined and cited nothing.'),
    passed: z.boolean(),
  })
  .meta({ id: 'EvalCaseResult', description: 'What one case produced.' });

export const evalResultSchema = z
  .object({
    model: z.string().describe('The model spec the answers came from (e.g. `builtin`).'),
    metrics: evalMetricsSchema,
    results: z.array(evalCaseResultSchema).describe('One per case, in the order given.'),
  })
  .meta({ id: 'EvalResult', description: 'The per-case results and metrics of a run.' });

export const evalRunSummarySchema = z
  .object({
    id: z.string().describe('`evrun_…`'),
    model: z.string(),
    metrics: evalMetricsSchema,
    createdAt: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'EvalRunSummary', description: 'A stored run without its per-case results.' });

export const evalRunSchema = evalRunSummarySchema
  .extend({ evalId: z.string(), results: z.array(evalCaseResultSchema) })
  .meta({ id: 'EvalRun', description: 'A stored run of a suite with its per-case results.' });

export const evalSuiteSchema = z
  .object({
    id: z.string().describe('`eval_…`'),
    projectId: z.string(),
    name: z.string(),
    cases: z.array(evalCaseSchema),
    createdAt: z.string().describe('ISO 8601 UTC'),
    updatedAt: z.string().describe('ISO 8601 UTC'),
    runs: z.array(evalRunSummarySchema).describe('Its stored runs, newest first (the last 50).'),
  })
  .meta({ id: 'EvalSuite', description: 'A named suite of cases and its runs.' });

export const evalSuiteSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    caseCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    lastRun: evalRunSummarySchema.nullable().describe('The newest run, if any.'),
  })
  .meta({ id: 'EvalSuiteSummary', description: 'A suite in a list.' });

const delta = z.number().nullable();
export const evalComparisonSchema = z
  .object({
    previousRunId: z.string(),
    previousAt: z.string(),
    delta: z
      .object({
        hitAt3: delta,
        mrrAt10: delta,
        citesExpectedSource: delta,
        keyTermsPresent: delta,
        unanswerableDeclined: delta,
        answeredAnyway: z.number().int(),
        wronglyDeclined: z.number().int(),
        passed: z.number().int(),
      })
      .describe('This run minus the previous one; null where either has no figure.'),
    nowFailing: z.array(z.string()).describe('Questions that passed last time and fail now.'),
    nowPassing: z.array(z.string()).describe('Questions that failed last time and pass now.'),
  })
  .meta({ id: 'EvalComparison', description: 'How a run compares with the run of the same suite before it.' });

export const evalRunCreated = z
  .object({ run: evalRunSchema, comparison: evalComparisonSchema.nullable().describe('Null for the first run of a suite.') })
  .meta({ id: 'EvalRunResponse', description: 'The stored run and how it compares with the previous one.' });

export const evalParams = projectParams.extend({ evalId: z.string().min(1).max(64).describe('Eval suite id (`eval_…`).') });
export const evalRunParams = evalParams.extend({ runId: z.string().min(1).max(64).describe('Run id (`evrun_…`).') });
export const evalWrapped = z.object({ eval: evalSuiteSchema }).meta({ id: 'EvalSuiteResponse', description: 'An eval suite.' });
export const evalList = z.object({ evals: z.array(evalSuiteSummarySchema) }).meta({ id: 'EvalSuiteList', description: "The project's eval suites, newest first." });
