import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { formatMetric, passedOf } from '../components/evals/cases';
import { RunResults, RunsTable } from '../components/evals/RunResults';
import { SuiteEditor } from '../components/evals/SuiteEditor';
import { ConfirmButton } from '../components/kit/kit';
import '../components/kit/pages.css';
import { formatDateTime, FormError, Loading, PageHeader, plural, QueryError, QueryStatus, ReadOnlyNote } from '../components/ui';
import { usePermissions, useProjectId } from '../lib/project';

type EvalSuite = components['schemas']['EvalSuite'];
type EvalRunResponse = components['schemas']['EvalRunResponse'];

const evalsKey = (projectId: string) => ['projects', projectId, 'evals'] as const;
const evalKey = (projectId: string, evalId: string) => [...evalsKey(projectId), evalId] as const;
const runKey = (projectId: string, evalId: string, runId: string) => [...evalKey(projectId, evalId), 'runs', runId] as const;

/** What a page passes on when it sends the user here (a suite just created, one just deleted). */
interface Arrival {
  created?: string;
  deleted?: string;
}

/**
 * What the page that sent the user here passed on, read once: the address's state is then cleared,
 * so a reload does not say again that a suite was just created or deleted.
 */
function useArrival(): Arrival {
  const location = useLocation();
  const navigate = useNavigate();
  const [arrival] = useState<Arrival>(() => (location.state ?? {}) as Arrival);
  useEffect(() => {
    if (location.state) navigate(`${location.pathname}${location.search}`, { replace: true, state: null });
  }, [location, navigate]);
  return arrival;
}

/**
 * Evals (answer regression tests): saved suites of questions with what a right answer holds, run
 * through retrieval and the agent to see what a knowledge, prompt or model change does before
 * customers do. The list, or one suite (`/evals/:evalId`) with the run shown kept in the address.
 */
export function Evals() {
  const { evalId } = useParams();
  if (evalId) return <SuitePage evalId={evalId} />;
  return <SuiteList />;
}

function SuiteList() {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const arrival = useArrival();
  const [creating, setCreating] = useState(false);
  const [deleted, setDeleted] = useState<string | null>(arrival.deleted ?? null);
  const newButton = useRef<HTMLButtonElement>(null);
  const suites = useQuery({
    queryKey: evalsKey(projectId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/evals', { params: { path: { projectId } } })).evals,
  });
  const remove = useMutation({
    mutationFn: async ({ id }: { id: string; name: string }) =>
      unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/evals/{evalId}', { params: { path: { projectId, evalId: id } } })),
    onSuccess: (_, { id, name }) => {
      setDeleted(name);
      queryClient.removeQueries({ queryKey: evalKey(projectId, id) });
      // The row goes once the list is read again: ConfirmButton then hands the focus to the next
      // suite's Delete, or to the page's title after the last one.
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: evalsKey(projectId) }),
  });

  return (
    <>
      <PageHeader
        title="Evals"
        description="Answer regression tests: questions with what a right answer holds, run through the agent to see what a knowledge, prompt or model change does before your customers see it."
      >
        <button
          type="button"
          ref={newButton}
          onClick={() => {
            setCreating(true);
            setDeleted(null);
          }}
          disabled={!perms.configure || creating}
        >
          New suite
        </button>
      </PageHeader>
      <ReadOnlyNote show={!perms.configure} />
      {deleted ? (
        <p className="success" role="status">
          Deleted “{deleted}” and its runs.
        </p>
      ) : null}
      {creating ? (
        <SuiteEditor
          projectId={projectId}
          onClose={() => {
            setCreating(false);
            // The editor (and its Cancel) is gone: back to the button that opened it.
            setTimeout(() => newButton.current?.focus());
          }}
          onCreated={(suite) => {
            queryClient.setQueryData(evalKey(projectId, suite.id), suite);
            void queryClient.invalidateQueries({ queryKey: evalsKey(projectId) });
            navigate(`/p/${projectId}/evals/${suite.id}`, { state: { created: suite.name } satisfies Arrival });
          }}
        />
      ) : null}
      <FormError error={remove.error} />
      <QueryStatus
        query={suites}
        isEmpty={!!suites.data && suites.data.length === 0}
        empty="No suites yet. A suite is a set of questions your customers ask, with the sources and key terms a right answer has, or marked as ones the agent should decline. Run it after changing the knowledge, the instructions or the model, and see what got better or worse."
      />
      {suites.data && suites.data.length > 0 ? (
        <div className="table-wrap">
          <table className="evals-table">
            <caption className="sr-only">Eval suites, newest first, with their last run</caption>
            <thead>
              <tr>
                <th scope="col">Suite</th>
                <th scope="col">Cases</th>
                <th scope="col">Last run</th>
                <th scope="col">Passed</th>
                <th scope="col">Hit@3</th>
                <th scope="col">MRR@10</th>
                <th scope="col">Answered anyway</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {suites.data.map((s) => {
                const m = s.lastRun?.metrics;
                return (
                  <tr key={s.id} data-eval-id={s.id}>
                    <td className="wrap-anywhere">
                      <Link to={`/p/${projectId}/evals/${s.id}`}>{s.name}</Link>
                    </td>
                    <td>{s.caseCount}</td>
                    <td>{s.lastRun ? formatDateTime(s.lastRun.createdAt) : <span className="muted">never run</span>}</td>
                    <td data-metric="passed">{m ? passedOf(m) : '—'}</td>
                    <td data-metric="hitAt3">{m ? formatMetric('rate', m.hitAt3) : '—'}</td>
                    <td data-metric="mrrAt10">{m ? formatMetric('mrr', m.mrrAt10) : '—'}</td>
                    <td data-metric="answeredAnyway">{m ? m.answeredAnyway : '—'}</td>
                    <td>
                      <ConfirmButton
                        label="Delete"
                        name={`Delete ${s.name}`}
                        confirmLabel={`Delete “${s.name}” and its runs`}
                        disabled={!perms.configure}
                        busy={remove.isPending && remove.variables?.id === s.id}
                        onConfirm={() => remove.mutate({ id: s.id, name: s.name })}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

function SuitePage({ evalId }: { evalId: string }) {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const arrival = useArrival();
  const [params, setParams] = useSearchParams();
  const suite = useQuery({
    queryKey: evalKey(projectId, evalId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/evals/{evalId}', { params: { path: { projectId, evalId } } })).eval,
  });
  // The run shown: the one in the address, else the newest.
  const runId = params.get('run') ?? suite.data?.runs[0]?.id ?? null;
  const run = useQuery({
    queryKey: runKey(projectId, evalId, runId ?? ''),
    enabled: runId !== null,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/admin/projects/{projectId}/evals/{evalId}/runs/{runId}', { params: { path: { projectId, evalId, runId: runId! } } })),
  });
  const resultsHeading = useRef<HTMLHeadingElement>(null);
  const [focusResults, setFocusResults] = useState(false);
  useEffect(() => {
    if (focusResults && run.data) {
      resultsHeading.current?.focus();
      setFocusResults(false);
    }
  }, [focusResults, run.data]);

  const start = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/evals/{evalId}/run', { params: { path: { projectId, evalId } } })),
    onSuccess: (result: EvalRunResponse) => {
      queryClient.setQueryData(runKey(projectId, evalId, result.run.id), result);
      void queryClient.invalidateQueries({ queryKey: evalKey(projectId, evalId), exact: true });
      void queryClient.invalidateQueries({ queryKey: evalsKey(projectId), exact: true });
      setFocusResults(true);
      // The new run is the one shown (and kept in the address): not a step of its own in the history.
      setParams({ run: result.run.id }, { replace: true });
    },
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/evals/{evalId}', { params: { path: { projectId, evalId } } })),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: evalKey(projectId, evalId) });
      void queryClient.invalidateQueries({ queryKey: evalsKey(projectId) });
      navigate(`/p/${projectId}/evals`, { state: { deleted: suite.data?.name } satisfies Arrival });
    },
  });

  const back = (
    <p>
      <Link to={`/p/${projectId}/evals`}>← All suites</Link>
    </p>
  );
  if (suite.isPending)
    return (
      <>
        {back}
        <Loading />
      </>
    );
  if (suite.isError)
    return (
      <>
        {back}
        <PageHeader title="Eval suite" />
        <QueryError error={suite.error} />
      </>
    );
  const s: EvalSuite = suite.data;
  const busy = start.isPending || remove.isPending;
  const runHref = (id: string) => `/p/${projectId}/evals/${evalId}?run=${id}`;
  const finished = start.data ? `Run finished: ${passedOf(start.data.run.metrics)} cases passed.` : null;
  return (
    <>
      {back}
      <PageHeader
        title={s.name}
        description={`${plural(s.cases.length, 'case')} · created ${formatDateTime(s.createdAt)} · ${s.runs.length ? `${plural(s.runs.length, 'run')} kept` : 'not run yet'}`}
      >
        <button type="button" onClick={() => start.mutate()} disabled={!perms.configure || busy}>
          {start.isPending ? 'Running…' : 'Run suite'}
        </button>
        <ConfirmButton label="Delete suite" confirmLabel={`Delete “${s.name}” and its runs`} disabled={!perms.configure} busy={busy} onConfirm={() => remove.mutate()} />
      </PageHeader>
      <ReadOnlyNote show={!perms.configure} />
      {arrival.created === s.name && !s.runs.length && !start.isPending ? (
        <p className="success" role="status">
          Created “{s.name}”. Run it to see how the agent answers its questions.
        </p>
      ) : null}
      <div role="status" className={start.isPending ? 'notice' : finished ? 'success' : undefined}>
        {start.isPending ? `Running ${plural(s.cases.length, 'case')} through the agent: this can take a minute with a hosted model…` : finished}
      </div>
      <FormError error={start.error ?? remove.error} />

      {runId === null ? (
        <p className="muted">No run yet. {perms.configure ? 'Run the suite to see each answer, the figures, and later what changed since the run before.' : ''}</p>
      ) : run.isPending ? (
        <Loading what="Loading the run…" />
      ) : run.isError ? (
        <QueryError error={run.error} />
      ) : (
        <RunResults
          data={run.data}
          runs={s.runs}
          headingRef={resultsHeading}
          latest={run.data.run.id === s.runs[0]?.id}
          runHref={runHref}
        />
      )}

      {s.runs.length > 0 ? <RunsTable runs={s.runs} shown={runId} runHref={runHref} /> : null}

      <section aria-labelledby="suite-cases-heading">
        <h2 id="suite-cases-heading">The cases</h2>
        <ol className="eval-suite-cases">
          {s.cases.map((c, i) => (
            <li key={i}>
              <p className="gap-question">{c.question}</p>
              <p className="small muted">
                {c.answerable === false
                  ? 'Not answered by the help content: the agent should decline.'
                  : [
                      c.expectedSources?.length ? `Expected sources: ${c.expectedSources.map((x) => `“${x}”`).join(', ')}` : 'No expected source named',
                      c.mustContain?.length ? `key terms: ${c.mustContain.map((x) => `“${x}”`).join(', ')}` : 'no key terms',
                    ].join(' · ')}
              </p>
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
