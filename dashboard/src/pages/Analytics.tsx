import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../api/client';
import { BarChart, ChartTable, type Series } from '../components/BarChart';
import { Loading, PageHeader, QueryError } from '../components/ui';
import { useProjectId } from '../lib/project';

const PERIODS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 12 months' },
];

const COLORS = { conversations: '#1d4ed8', messages: '#0f766e', positive: '#15803d', negative: '#b91c1c', answered: '#15803d', declined: '#b45309', action: '#7c3aed', error: '#b91c1c' };

const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 100)} %`);

/** Figures and charts over a chosen period, straight from GET /projects/{id}/analytics. */
export function Analytics() {
  const projectId = useProjectId();
  const [days, setDays] = useState(30);
  const analytics = useQuery({
    queryKey: ['projects', projectId, 'analytics', days],
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/analytics', { params: { path: { projectId }, query: { days } } })),
  });
  const a = analytics.data;
  const perDay = useMemo(() => {
    if (!a) return null;
    const labels = a.byDay.map((d) => d.date.slice(5));
    const activity: Series[] = [
      { label: 'Conversations', color: COLORS.conversations, values: a.byDay.map((d) => d.conversations) },
      { label: 'Messages', color: COLORS.messages, values: a.byDay.map((d) => d.messages) },
    ];
    const feedback: Series[] = [
      { label: 'Positive', color: COLORS.positive, values: a.byDay.map((d) => d.positive) },
      { label: 'Negative', color: COLORS.negative, values: a.byDay.map((d) => d.negative) },
    ];
    const hours: Series[] = [{ label: 'Visitor messages', color: COLORS.conversations, values: a.byHour.map((h) => h.messages) }];
    const outcomes: Series[] = [
      {
        label: 'Answers',
        color: COLORS.answered,
        values: [a.outcomes.answered, a.outcomes.declined, a.outcomes.action, a.outcomes.error],
      },
    ];
    return { labels, activity, feedback, hours, hourLabels: a.byHour.map((h) => String(h.hour).padStart(2, '0')), outcomes };
  }, [a]);

  return (
    <>
      <PageHeader title="Analytics" description="What visitors asked and how the assistant did. Days and hours are UTC.">
        <label className="row">
          Period
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {PERIODS.map((p) => (
              <option key={p.days} value={p.days}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
      </PageHeader>
      {analytics.isPending ? <Loading /> : null}
      {analytics.isError ? <QueryError error={analytics.error} /> : null}
      {a && perDay ? (
        <>
          <dl className="stats" aria-label="Totals">
            <div>
              <dt>Conversations</dt>
              <dd data-stat="conversations">{a.conversations.total}</dd>
            </div>
            <div>
              <dt>Messages</dt>
              <dd data-stat="messages">{a.messages.total}</dd>
            </div>
            <div>
              <dt>Answered</dt>
              <dd data-stat="answered">{a.outcomes.answered + a.outcomes.action}</dd>
            </div>
            <div>
              <dt>Declined</dt>
              <dd data-stat="declined">{a.outcomes.declined}</dd>
            </div>
            <div>
              <dt>Answer rate</dt>
              <dd data-stat="answeredRate">{percent(a.outcomes.answeredRate)}</dd>
            </div>
            <div>
              <dt>Positive feedback</dt>
              <dd data-stat="positive">{a.feedback.positive}</dd>
            </div>
            <div>
              <dt>Negative feedback</dt>
              <dd data-stat="negative">{a.feedback.negative}</dd>
            </div>
            <div>
              <dt>Satisfaction</dt>
              <dd data-stat="satisfaction">{percent(a.rates.satisfaction)}</dd>
            </div>
            <div>
              <dt>Unanswered conversations</dt>
              <dd data-stat="unanswered">{a.conversations.unanswered}</dd>
            </div>
            <div>
              <dt>Failed answers</dt>
              <dd data-stat="failed">{a.messages.failed}</dd>
            </div>
          </dl>
          <section className="card" aria-labelledby="chart-activity">
            <h2 id="chart-activity">Conversations and messages per day</h2>
            <BarChart kind="lines" title="Conversations and messages per day" labels={perDay.labels} series={perDay.activity} />
          </section>
          <section className="card" aria-labelledby="chart-outcomes">
            <h2 id="chart-outcomes">Answered vs declined</h2>
            <OutcomeBars outcomes={a.outcomes} />
            <ChartTable title="Answers by outcome" labels={['Answered', 'Declined', 'Action', 'Error']} series={perDay.outcomes} />
          </section>
          <section className="card" aria-labelledby="chart-feedback">
            <h2 id="chart-feedback">Feedback per day</h2>
            <BarChart kind="lines" title="Positive and negative feedback per day" labels={perDay.labels} series={perDay.feedback} />
          </section>
          <section className="card" aria-labelledby="chart-hours">
            <h2 id="chart-hours">Busiest hours (UTC)</h2>
            <BarChart title="Visitor messages by hour of the day" labels={perDay.hourLabels} series={perDay.hours} />
          </section>
        </>
      ) : null}
    </>
  );
}

/** One bar split by outcome: the share of each kind of answer. */
function OutcomeBars({ outcomes }: { outcomes: { answered: number; declined: number; action: number; error: number } }) {
  const parts = [
    { key: 'answered', label: 'Answered', n: outcomes.answered, color: COLORS.answered },
    { key: 'action', label: 'Action', n: outcomes.action, color: COLORS.action },
    { key: 'declined', label: 'Declined', n: outcomes.declined, color: COLORS.declined },
    { key: 'error', label: 'Error', n: outcomes.error, color: COLORS.error },
  ];
  const total = parts.reduce((s, p) => s + p.n, 0);
  if (!total) return <p className="muted">No answers in this period.</p>;
  return (
    <>
      <div className="legend" aria-hidden="true">
        {parts.map((p) => (
          <span key={p.key} style={{ ['--swatch' as string]: p.color }}>
            {p.label} {p.n}
          </span>
        ))}
      </div>
      <div className="outcome-bar" role="img" aria-label={parts.map((p) => `${p.label} ${p.n}`).join(', ')}>
        {parts
          .filter((p) => p.n > 0)
          .map((p) => (
            <span key={p.key} style={{ width: `${(p.n / total) * 100}%`, background: p.color }} />
          ))}
      </div>
    </>
  );
}
