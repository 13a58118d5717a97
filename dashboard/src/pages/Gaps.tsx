import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiError, api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { ConfirmButton, StatusBadge } from '../components/kit/kit';
import '../components/kit/pages.css';
import { KnowledgeTabs } from '../components/knowledge/KnowledgeTabs';
import { Field, formatDateTime, FormError, PageHeader, plural, QueryStatus, ReadOnlyNote } from '../components/ui';
import { usePermissions, useProjectId } from '../lib/project';
import { sourcesKey } from './Knowledge';

export type KnowledgeGap = components['schemas']['KnowledgeGap'];

export const gapsKey = (projectId: string, days?: number) => ['projects', projectId, 'gaps', ...(days ? [days] : [])] as const;

/** The periods offered; the API takes 1..365 days. */
const PERIODS = [7, 30, 90] as const;
type Period = (typeof PERIODS)[number];
/** The API's limit on an answer (resolveGapBody). */
const ANSWER_MAX = 10_000;

function periodOf(params: URLSearchParams): Period {
  const days = Number(params.get('days'));
  return (PERIODS as readonly number[]).includes(days) ? (days as Period) : 30;
}

/**
 * Knowledge gaps: the questions the agent declined or whose answer was rated down, grouped by
 * meaning, most frequent first. An admin answers one (it goes into the FAQ source "Answers from the
 * support team") or dismisses it; everyone else reads.
 */
export function Gaps() {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const days = periodOf(params);
  // The answers being written, by gap. Several forms may be open; each keeps its text until it is
  // saved or cancelled, also while its gap is outside the period shown.
  const [answers, setAnswers] = useState<Record<string, string | undefined>>({});
  const setAnswer = (gapId: string, text: string | undefined) => setAnswers((all) => ({ ...all, [gapId]: text }));
  // The form just opened takes the focus; one shown again when the period changes back does not.
  const [opened, setOpened] = useState<string | null>(null);
  // The gap whose form was just cancelled: its "Answer this" takes the focus back.
  const [cancelled, setCancelled] = useState<string | null>(null);
  const [flash, setFlash] = useState<{ question: string; sourceTitle: string } | null>(null);

  const gaps = useQuery({
    queryKey: gapsKey(projectId, days),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/gaps', { params: { path: { projectId }, query: { days } } })).gaps,
    // Another period keeps the list on screen until its own arrives.
    placeholderData: keepPreviousData,
  });
  /** Takes a closed gap out of every period's list at once, then reads them again. */
  const drop = (gapId: string) => {
    queryClient.setQueriesData<KnowledgeGap[]>({ queryKey: gapsKey(projectId) }, (list) => list?.filter((g) => g.id !== gapId));
    void queryClient.invalidateQueries({ queryKey: gapsKey(projectId) });
  };

  const dismiss = useMutation({
    mutationFn: async (gapId: string) =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/gaps/{gapId}/dismiss', { params: { path: { projectId, gapId } } })),
    onSuccess: (_, gapId) => {
      setFlash(null);
      drop(gapId);
    },
  });

  return (
    <>
      <PageHeader
        title="Knowledge gaps"
        description="Questions the agent could not answer from your knowledge: it declined them, or the customer rated the answer down. Answer one and the agent answers it from then on."
      />
      <KnowledgeTabs projectId={projectId} />
      <ReadOnlyNote show={!perms.configure} />
      <div className="row gaps-period">
        <label htmlFor="gaps-period">Period</label>
        <select
          id="gaps-period"
          value={days}
          onChange={(e) => {
            const next = new URLSearchParams(params);
            next.set('days', e.target.value);
            setParams(next);
            setOpened(null);
            setCancelled(null);
          }}
        >
          {PERIODS.map((d) => (
            <option key={d} value={d}>
              Last {d} days
            </option>
          ))}
        </select>
      </div>
      {flash ? (
        <p className="success" role="status">
          Answered “{flash.question}”. The answer is in the FAQ source “{flash.sourceTitle}” (see <Link to={`/p/${projectId}/knowledge`}>Sources</Link>); the agent
          uses it as soon as it is indexed.
        </p>
      ) : null}
      <FormError error={dismiss.error} />
      <QueryStatus
        query={gaps}
        isEmpty={!!gaps.data && gaps.data.length === 0}
        empty={
          <>
            No knowledge gaps in the last {days} days. A gap is a question the agent declined because your knowledge does not cover it, or whose answer a
            customer rated down; questions asked in other words are grouped together. They show up here as customers ask them.
          </>
        }
      />
      {gaps.data && gaps.data.length > 0 ? (
        <ol className="gap-list" aria-label="Knowledge gaps, most frequent first">
          {gaps.data.map((g) => {
            const answer = answers[g.id];
            return (
              <li key={g.id} data-gap-id={g.id}>
                <p className="gap-question">{g.question}</p>
                <div className="meta">
                  <span>asked {plural(g.count, 'time')}</span>
                  <span>last asked {formatDateTime(g.lastAskedAt)}</span>
                  {g.reasons.declined > 0 ? <StatusBadge tone="neutral">declined {g.reasons.declined}</StatusBadge> : null}
                  {g.reasons.negativeFeedback > 0 ? <StatusBadge tone="bad">rated down {g.reasons.negativeFeedback}</StatusBadge> : null}
                </div>
                <details>
                  <summary>How it was asked ({plural(g.examples.length, 'example')})</summary>
                  <ul className="gap-examples">
                    {g.examples.map((e) => (
                      <li key={e.messageId}>
                        <Link to={`/p/${projectId}/conversations/${e.conversationId}`}>“{e.text}”</Link>
                      </li>
                    ))}
                  </ul>
                </details>
                {perms.configure ? (
                  answer !== undefined ? (
                    <AnswerForm
                      projectId={projectId}
                      gap={g}
                      answer={answer}
                      autoFocus={opened === g.id}
                      onChange={(text) => setAnswer(g.id, text)}
                      onCancel={() => {
                        setAnswer(g.id, undefined);
                        setCancelled(g.id);
                      }}
                      onResolved={(sourceTitle) => {
                        setAnswer(g.id, undefined);
                        setFlash({ question: g.question, sourceTitle });
                        drop(g.id);
                        void queryClient.invalidateQueries({ queryKey: sourcesKey(projectId) });
                      }}
                    />
                  ) : (
                    <div className="row">
                      <button
                        type="button"
                        autoFocus={cancelled === g.id}
                        onClick={() => {
                          setAnswer(g.id, '');
                          setOpened(g.id);
                          setCancelled(null);
                          setFlash(null);
                        }}
                      >
                        Answer this
                      </button>
                      <ConfirmButton label="Dismiss" confirmLabel="Dismiss for good" busy={dismiss.isPending && dismiss.variables === g.id} onConfirm={() => dismiss.mutate(g.id)} />
                    </div>
                  )
                ) : null}
              </li>
            );
          })}
        </ol>
      ) : null}
    </>
  );
}

/** The inline form that answers one gap. The page holds its text, which stays when the server refuses it. */
function AnswerForm({
  projectId,
  gap,
  answer,
  autoFocus,
  onChange,
  onCancel,
  onResolved,
}: {
  projectId: string;
  gap: KnowledgeGap;
  answer: string;
  autoFocus: boolean;
  onChange: (answer: string) => void;
  onCancel: () => void;
  onResolved: (sourceTitle: string) => void;
}) {
  const resolve = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/gaps/{gapId}/resolve', { params: { path: { projectId, gapId: gap.id } }, body: { answer } })),
    onSuccess: (result) => onResolved(result.source.title ?? 'Answers from the support team'),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    resolve.mutate();
  };
  const fieldError = resolve.error instanceof ApiError ? resolve.error.fieldError('answer') : undefined;
  return (
    <form className="gap-answer" onSubmit={submit} aria-label={`Answer “${gap.question}”`}>
      <Field label="Answer" hint={`Added with the question to the FAQ source “Answers from the support team”. Up to ${ANSWER_MAX.toLocaleString()} characters.`} error={fieldError}>
        {(p) => <textarea {...p} rows={4} required maxLength={ANSWER_MAX} value={answer} onChange={(e) => onChange(e.target.value)} autoFocus={autoFocus} />}
      </Field>
      <FormError error={fieldError ? null : resolve.error} />
      <div className="row">
        <button type="submit" disabled={resolve.isPending || answer.trim() === ''}>
          Save answer
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
