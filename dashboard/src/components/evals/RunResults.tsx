import type { Ref } from 'react';
import { Link } from 'react-router';
import type { components } from '../../api/schema';
import { StatusBadge } from '../kit/kit';
import { formatDateTime } from '../ui';
import { direction, formatDelta, formatMetric, METRICS, passedOf, whyFailed, type EvalCaseResult, type EvalMetrics } from './cases';

type EvalRunResponse = components['schemas']['EvalRunResponse'];
type EvalRunSummary = components['schemas']['EvalRunSummary'];

const OUTCOME: Record<EvalCaseResult['outcome'], string> = { answered: 'answered', declined: 'declined', action: 'called an action', error: 'failed' };

function metricValue(kind: 'rate' | 'mrr' | 'count', key: keyof EvalMetrics, m: EvalMetrics): string {
  if (key === 'passed') return passedOf(m);
  if (key === 'answeredAnyway') return `${m.answeredAnyway} of ${m.unanswerable}`;
  if (key === 'wronglyDeclined') return `${m.wronglyDeclined} of ${m.answerable}`;
  return formatMetric(kind, m[key]);
}

/**
 * One run of a suite: its figures beside the run before it (what got better or worse, and which
 * questions now fail or now pass), then each case's result: answered or declined, the sources the
 * answer cited, pass or fail and why, and the answer itself.
 */
export function RunResults({
  data,
  runs,
  headingRef,
  latest,
  runHref,
}: {
  data: EvalRunResponse;
  runs: EvalRunSummary[];
  headingRef: Ref<HTMLHeadingElement>;
  latest: boolean;
  runHref: (runId: string) => string;
}) {
  const { run, comparison } = data;
  const previous = comparison ? runs.find((r) => r.id === comparison.previousRunId) : undefined;
  const m = run.metrics;
  return (
    <section className="eval-run" aria-labelledby="eval-run-heading" data-run-id={run.id}>
      <h2 id="eval-run-heading" tabIndex={-1} ref={headingRef}>
        {latest ? 'Last run' : 'Run'}, {formatDateTime(run.createdAt)}
      </h2>
      <p className="muted">
        Model <code>{run.model}</code>: {m.passed} of {m.cases} cases passed ({m.answerable} answerable, {m.unanswerable} unanswerable).{' '}
        {comparison ? (
          <>
            Compared with the run of{' '}
            {previous ? <Link to={runHref(comparison.previousRunId)}>{formatDateTime(comparison.previousAt)}</Link> : formatDateTime(comparison.previousAt)}.
          </>
        ) : (
          'The first run of this suite: nothing to compare with.'
        )}
      </p>
      <div className="table-wrap">
        <table className="eval-metrics">
          <caption className="sr-only">Figures of this run{comparison ? ', with the run before it' : ''}</caption>
          <thead>
            <tr>
              <th scope="col">Figure</th>
              <th scope="col">This run</th>
              {comparison ? (
                <>
                  <th scope="col">Run before</th>
                  <th scope="col">Change</th>
                </>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {METRICS.map(({ key, label, kind, higherIsBetter, hint }) => {
              const delta = comparison ? comparison.delta[key] : null;
              const way = direction(delta, higherIsBetter);
              return (
                <tr key={key} data-metric={key}>
                  <th scope="row">
                    {label}
                    <div className="small muted">{hint}</div>
                  </th>
                  <td data-cell="value">{metricValue(kind, key, m)}</td>
                  {comparison ? (
                    <>
                      <td data-cell="previous">{previous ? metricValue(kind, key, previous.metrics) : '—'}</td>
                      <td data-cell="change">
                        {formatDelta(kind, delta)}
                        {way ? (
                          <>
                            {' '}
                            <StatusBadge tone={way === 'better' ? 'ok' : 'bad'}>{way}</StatusBadge>
                          </>
                        ) : null}
                      </td>
                    </>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p className="small muted">— : no case of the suite measures it.</p>

      {comparison ? (
        <div className="eval-changes">
          <h3>What changed since the run before</h3>
          {comparison.nowFailing.length + comparison.nowPassing.length === 0 ? (
            <p>Every question has the same result as in the run before.</p>
          ) : (
            <>
              {comparison.nowFailing.length ? (
                <>
                  <p>
                    <StatusBadge tone="bad">worse</StatusBadge> Now failing ({comparison.nowFailing.length}):
                  </p>
                  <ul aria-label="Now failing">
                    {comparison.nowFailing.map((q, i) => (
                      <li key={i}>{q}</li>
                    ))}
                  </ul>
                </>
              ) : null}
              {comparison.nowPassing.length ? (
                <>
                  <p>
                    <StatusBadge tone="ok">better</StatusBadge> Now passing ({comparison.nowPassing.length}):
                  </p>
                  <ul aria-label="Now passing">
                    {comparison.nowPassing.map((q, i) => (
                      <li key={i}>{q}</li>
                    ))}
                  </ul>
                </>
              ) : null}
            </>
          )}
        </div>
      ) : null}

      <h3>Each case</h3>
      <ol className="eval-results" aria-label="Results of each case">
        {run.results.map((r, i) => (
          <li key={i} data-case={i + 1} data-passed={r.passed}>
            <div className="eval-result-head">
              <StatusBadge tone={r.passed ? 'ok' : 'bad'}>{r.passed ? 'pass' : 'fail'}</StatusBadge>
              <span className="gap-question">{r.question}</span>
            </div>
            <div className="meta">
              <span data-cell="outcome">{OUTCOME[r.outcome]}</span>
              <span>{r.answerable ? 'should be answered' : 'should be declined'}</span>
              <span data-cell="rank">
                {r.rank !== null ? `expected source ranked ${r.rank} of 10` : r.citesExpected === null ? 'no expected source named' : 'no expected source in the top 10'}
              </span>
            </div>
            <p className="small" data-cell="cited">
              {r.cited.length ? (
                <>
                  Cited:{' '}
                  {r.cited.map((c, j) => (
                    <span key={j}>
                      {j ? ', ' : ''}
                      {c.url && /^https?:\/\//i.test(c.url) ? (
                        <a href={c.url} target="_blank" rel="noreferrer noopener">
                          {c.title || c.url}
                        </a>
                      ) : (
                        c.title || c.sourceId
                      )}
                    </span>
                  ))}
                </>
              ) : (
                'Cited no source.'
              )}
            </p>
            {r.passed ? null : (
              <p className="small field-error" data-cell="why">
                Why: {whyFailed(r).join('; ')}
              </p>
            )}
            <details>
              <summary>The answer</summary>
              <p className="chunk-text">{r.answer || '(empty)'}</p>
            </details>
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The kept runs of a suite, newest first, each linking to its results. */
export function RunsTable({ runs, shown, runHref }: { runs: EvalRunSummary[]; shown: string | null; runHref: (runId: string) => string }) {
  return (
    <section aria-labelledby="eval-runs-heading">
      <h2 id="eval-runs-heading">Runs</h2>
      <div className="table-wrap">
        <table className="eval-runs">
          <caption className="sr-only">The suite’s kept runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Model</th>
              <th scope="col">Passed</th>
              <th scope="col">Hit@3</th>
              <th scope="col">MRR@10</th>
              <th scope="col">Cites expected</th>
              <th scope="col">Key terms</th>
              <th scope="col">Unanswerable declined</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-run-id={r.id} aria-current={r.id === shown ? 'true' : undefined}>
                <td>
                  <Link to={runHref(r.id)} aria-current={r.id === shown ? 'page' : undefined}>
                    {formatDateTime(r.createdAt)}
                  </Link>
                </td>
                <td>
                  <code>{r.model}</code>
                </td>
                <td>{passedOf(r.metrics)}</td>
                <td>{formatMetric('rate', r.metrics.hitAt3)}</td>
                <td>{formatMetric('mrr', r.metrics.mrrAt10)}</td>
                <td>{formatMetric('rate', r.metrics.citesExpectedSource)}</td>
                <td>{formatMetric('rate', r.metrics.keyTermsPresent)}</td>
                <td>{formatMetric('rate', r.metrics.unanswerableDeclined)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
