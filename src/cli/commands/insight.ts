import { activityQuery, analyticsQuery, type ActivityItem, type Analytics } from '../../api/insight/schema.js';
import { projectQuestionTerms } from '../../api/gaps/service.js';
import { activityFeed, projectAnalytics } from '../../api/insight/service.js';
import { getProject } from '../../projects/projects.js';
import { flatText, jsonText, option, parseCommand, parseInput, printJson, printTable, printText, required, withDeps, withStore } from './shared.js';
import { printUsage, type CommandGroup } from './types.js';

const analyticsUsage = `Usage:
  answerdesk analytics --project <projectId> [--days <n>] [--json]

Conversation, message and feedback counts over the last --days UTC days (1..365, default 30,
today included), with the answered, satisfaction and failure rates, the answers by outcome
(answered, declined, from actions, failed) with the answered and declined rates, a per-day series
and the top questions.
--json prints the same JSON as GET /api/v1/admin/projects/{id}/analytics.
Works directly on the database named by DATABASE_URL.
`;

const activityUsage = `Usage:
  answerdesk activity --project <projectId> [--after <cursor>] [--limit <n>] [--follow] [--json]

The latest messages of every conversation of the project, oldest first (at most --limit, 1..50,
default 50). --after takes the cursor a previous run printed, to see only what came since.
--follow keeps watching, printing new messages every 2 seconds, until interrupted (Ctrl-C).
--json prints the same JSON as GET /api/v1/admin/projects/{id}/activity (one object per poll).
Works directly on the database named by DATABASE_URL.
`;

const pct = (r: number | null) => (r === null ? '-' : `${Math.round(r * 1000) / 10}%`);

function printAnalytics(a: Analytics, days: number): void {
  const c = a.conversations;
  const m = a.messages;
  const o = a.outcomes;
  process.stdout.write(
    [
      `Last ${days} day(s), ${a.from.slice(0, 10)} to ${a.to.slice(0, 10)} (UTC):`,
      `  conversations  ${c.total} (${c.active} active, ${c.closed} closed, ${c.unanswered} unanswered, ${c.identified} identified, ${c.endUsers} end users)`,
      `  messages       ${m.total} (${m.user} from users, ${m.assistant - m.human} answers, ${m.human} from people, ${m.failed} failed)`,
      `  answers        ${o.answered} answered, ${o.declined} declined, ${o.action} from actions, ${o.error} failed (answered ${pct(o.answeredRate)}, declined ${pct(o.declinedRate)})`,
      `  feedback       ${a.feedback.positive} positive, ${a.feedback.negative} negative`,
      `  rates          conversations answered ${pct(a.rates.answered)}, satisfaction ${pct(a.rates.satisfaction)}, answer failures ${pct(a.rates.answerFailure)}`,
      '',
    ].join('\n'),
  );
  const active = a.byDay.filter((d) => d.conversations || d.messages || d.positive || d.negative);
  if (active.length > 0) {
    printTable(['DATE', 'CONVERSATIONS', 'MESSAGES', 'POSITIVE', 'NEGATIVE'], active.map((d) => [d.date, String(d.conversations), String(d.messages), String(d.positive), String(d.negative)]));
  }
  if (a.topQuestions.length > 0) {
    process.stdout.write('\nTop questions:\n');
    printTable(['COUNT', 'LAST ASKED', 'QUESTION'], a.topQuestions.map((q) => [String(q.count), q.lastAskedAt, q.question]));
  }
}

async function analytics(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, days: { type: 'string' }, json: { type: 'boolean' } }, analyticsUsage);
  if (cmd.help) return printUsage(analyticsUsage);
  const projectId = required(option(cmd, 'project'), 'project', analyticsUsage);
  const { days } = parseInput(analyticsQuery, { days: option(cmd, 'days') }, analyticsUsage, 'options');
  const result = await withDeps(async (deps) => projectAnalytics(deps.store.db, await getProject(deps.store.db, projectId), days, await projectQuestionTerms(deps, projectId)));
  if (cmd.values.json) printJson(result);
  else printAnalytics(result, days);
  return 0;
}

function activityLine(m: ActivityItem): string {
  const who = m.role === 'user' ? `user ${m.endUserExternalId === null ? '(anonymous)' : flatText(m.endUserExternalId)}` : 'agent';
  const flag = m.status === 'complete' ? '' : ` [${m.status}]`;
  return `${m.createdAt}  ${m.conversationId}  ${who}${flag}: ${flatText(m.preview)}`;
}

/** How often --follow polls: the dashboard's own rhythm. */
const FOLLOW_POLL_MS = 2000;

async function activity(args: string[]): Promise<number> {
  const cmd = parseCommand(
    args,
    { project: { type: 'string' }, after: { type: 'string' }, limit: { type: 'string' }, follow: { type: 'boolean' }, json: { type: 'boolean' } },
    activityUsage,
  );
  if (cmd.help) return printUsage(activityUsage);
  const projectId = required(option(cmd, 'project'), 'project', activityUsage);
  const query = parseInput(activityQuery, { after: option(cmd, 'after'), limit: option(cmd, 'limit') }, activityUsage, 'options');
  return withStore(async (store) => {
    await getProject(store.db, projectId);
    let after = query.after;
    let stopped = false;
    const stop = () => void (stopped = true);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      for (let first = true; ; first = false) {
        const feed = await activityFeed(store.db, projectId, { after, limit: query.limit });
        if (cmd.values.json) process.stdout.write(`${jsonText(feed)}\n`);
        else {
          if (feed.truncated) process.stdout.write(`(more than ${query.limit} messages arrived; older ones skipped)\n`);
          for (const m of feed.messages) printText(`${activityLine(m)}\n`);
          if (first && feed.messages.length === 0 && !cmd.values.follow) process.stdout.write('No messages.\n');
        }
        after = feed.nextCursor;
        if (!cmd.values.follow) {
          if (!cmd.values.json) process.stdout.write(`Next: add --after ${feed.nextCursor}\n`);
          return 0;
        }
        for (let waited = 0; waited < FOLLOW_POLL_MS && !stopped; waited += 100) await new Promise((r) => setTimeout(r, 100));
        if (stopped) return 0;
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  });
}

export const analyticsCommand: CommandGroup = {
  name: 'analytics',
  usage: analyticsUsage,
  run: analytics,
};

export const activityCommand: CommandGroup = {
  name: 'activity',
  usage: activityUsage,
  run: activity,
};
