import { adminConversationsQuery, type AdminConversationDetail } from '../../api/conversations/admin-schema.js';
import { closeAdminConversation, listAdminConversations, readAdminConversation } from '../../api/conversations/admin-service.js';
import type { Project } from '../../projects/project.js';
import { getProject } from '../../projects/projects.js';
import type { Store } from '../../store/index.js';
import { flatText, option, parseCommand, parseInput, printJson, printTable, printText, required, withStore } from './shared.js';
import { printUsage, subcommandGroup } from './types.js';

const usage = `Usage:
  answerdesk conversation list --project <projectId> [--status ACTIVE|CLOSED] [--user <externalId>]
                               [--end-user <eu_…>] [--from <time>] [--to <time>] [--include-empty]
                               [--limit <n>] [--cursor <nextCursor>] [--json]
  answerdesk conversation show --project <projectId> <conversationId> [--json]
  answerdesk conversation close --project <projectId> <conversationId> [--json]

list     The project's conversations, most recently updated first. Filters combine with AND:
         --user takes your id of the end user, --from/--to ISO 8601 times (start of the
         conversation), --include-empty also lists conversations nobody wrote in. --limit 1..100
         (default 20); when more follow, the next page's --cursor is printed.
show     One conversation with its messages (every version of a regenerated answer) and feedback.
close    Closes the conversation: sending into it then answers 400 "Conversation expired".

--json prints the same JSON as the admin API (GET /projects/{id}/conversations[/{conversationId}],
POST …/{conversationId}/close).
Works directly on the database named by DATABASE_URL.
`;

const ONE_CONVERSATION = { min: 1, max: 1, names: '<conversationId>' };

function withProject<T>(projectId: string, fn: (store: Store, project: Project) => Promise<T>): Promise<T> {
  return withStore(async (store) => fn(store, await getProject(store.db, projectId)));
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(
    args,
    {
      project: { type: 'string' },
      status: { type: 'string' },
      user: { type: 'string' },
      'end-user': { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'include-empty': { type: 'boolean' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
    },
    usage,
  );
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  // The admin route's own query schema: the same filters, limits and messages.
  const query = parseInput(
    adminConversationsQuery,
    {
      status: option(cmd, 'status')?.toUpperCase(),
      userId: option(cmd, 'user'),
      endUserId: option(cmd, 'end-user'),
      from: option(cmd, 'from'),
      to: option(cmd, 'to'),
      includeEmpty: cmd.values['include-empty'] ? 'true' : undefined,
      limit: option(cmd, 'limit'),
      cursor: option(cmd, 'cursor'),
    },
    usage,
    'options',
  );
  const { limit, cursor, includeEmpty, userId, ...filter } = query;
  const page = await withProject(projectId, (store, project) =>
    listAdminConversations(store.db, project, { ...filter, externalUserId: userId, includeEmpty: includeEmpty === 'true' }, { limit, cursor }),
  );
  if (cmd.values.json) {
    printJson(page);
    return 0;
  }
  if (page.conversations.length === 0) process.stdout.write('No conversations.\n');
  else
    printTable(
      ['ID', 'STATUS', 'MESSAGES', 'UPDATED', 'USER', 'LAST MESSAGE'],
      page.conversations.map((c) => [
        c.id,
        c.status,
        String(c.messageCount),
        c.updatedAt,
        c.endUser?.externalId ?? '-',
        flatText(`${c.lastMessageRole === 'ASSISTANT' ? 'agent' : 'user'}: ${c.lastMessagePreview ?? ''}`, 60),
      ]),
    );
  if (page.nextCursor) process.stdout.write(`More: add --cursor ${page.nextCursor}\n`);
  return 0;
}

function printConversation(detail: AdminConversationDetail): void {
  const c = detail.conversation;
  // A message keeps its lines (indented); any other stored text stays on its own line: flatText.
  const who = c.endUser ? `${flatText(c.endUser.externalId)}${c.endUser.verified ? ' (verified)' : ''}` : 'anonymous';
  const ratings = new Map(detail.feedback.filter((f) => f.messageId).map((f) => [f.messageId!, f]));
  const out = [`Conversation ${c.id}: ${c.status}, ${c.messageCount} messages, ${who}, started ${c.createdAt}`, ''];
  for (const m of detail.messages) {
    const tags = [m.status && m.status !== 'complete' ? m.status : '', m.supersededBy ? `replaced by ${m.supersededBy}` : ''].filter(Boolean);
    out.push(`[${m.createdAt}] ${m.role === 'user' ? 'User' : 'Agent'} ${m.id}${tags.length ? ` (${tags.join(', ')})` : ''}`);
    out.push(...(m.content || '(no text)').split('\n').map((line) => `  ${line}`));
    for (const s of m.sources ?? []) out.push(`  source: ${flatText(s.title ?? '')}${'url' in s && s.url ? ` <${flatText(s.url)}>` : ''}`);
    const rating = ratings.get(m.id);
    if (rating) out.push(`  rated ${rating.rating}${rating.comment ? `: ${flatText(rating.comment)}` : ''}`);
    out.push('');
  }
  for (const f of detail.feedback.filter((f) => !f.messageId)) {
    out.push(`Conversation rated ${f.rating}${f.comment ? `: ${flatText(f.comment)}` : ''}`);
  }
  printText(`${out.join('\n').trimEnd()}\n`);
}

async function show(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage, ONE_CONVERSATION);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const detail = await withProject(projectId, (store, project) => readAdminConversation(store.db, project, cmd.positionals[0]!));
  if (cmd.values.json) printJson(detail);
  else printConversation(detail);
  return 0;
}

async function close(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage, ONE_CONVERSATION);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const conversation = await withProject(projectId, (store, project) => closeAdminConversation(store.db, project, cmd.positionals[0]!));
  if (cmd.values.json) printJson({ conversation });
  else process.stdout.write(`Closed conversation ${conversation.id} at ${conversation.closedAt}.\n`);
  return 0;
}

export const conversationCommands = subcommandGroup({
  name: 'conversation',
  usage,
  subcommands: { list, show, close },
});
