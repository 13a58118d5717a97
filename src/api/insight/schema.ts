import { z } from 'zod';
import { wholeNumberParam } from '../../lib/query-number.js';
import { messageAuthorSchema } from '../conversations/schema.js';

export const activityQuery = z
  .object({
    after: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('nextCursor of the previous poll. Absent: start with the latest messages.'),
    limit: wholeNumberParam(1, 50, 50).describe('At most this many messages, 1..50.'),
  })
  .describe('Activity feed paging.');

export const activityItem = z
  .object({
    id: z.string().describe('Message id (`msg_…`).'),
    conversationId: z.string(),
    role: z.enum(['user', 'assistant']),
    status: z.enum(['complete', 'streaming', 'error']),
    preview: z.string().describe('First 150 characters of the message.'),
    createdAt: z.string().describe('ISO 8601 UTC'),
    endUserExternalId: z.string().nullable().describe('Your id of the end user; null for an anonymous conversation.'),
    author: messageAuthorSchema.optional().describe('Who wrote an assistant message: the agent, or a person (with their name).'),
  })
  .meta({ id: 'ActivityItem', description: 'A message in the activity feed.' });
export type ActivityItem = z.infer<typeof activityItem>;

export const activityFeed = z
  .object({
    messages: z.array(activityItem).describe('Oldest first.'),
    nextCursor: z.string().describe('Pass as `after` on the next poll.'),
    truncated: z
      .boolean()
      .describe('More messages arrived since the cursor than `limit`; only the newest ones are here (the feed stays current).'),
  })
  .meta({ id: 'ActivityFeed', description: 'Messages since the previous poll.' });

export const analyticsQuery = z
  .object({
    days: wholeNumberParam(1, 365, 30).describe('Window in whole UTC days, today included; 1..365.'),
  })
  .describe('Analytics window.');

const count = z.number().int().min(0);
const rate = z.number().min(0).max(1).nullable();

export const analyticsSchema = z
  .object({
    from: z.string().describe('Start of the window (UTC midnight), ISO 8601.'),
    to: z.string().describe('Time the figures were computed, ISO 8601.'),
    conversations: z
      .object({
        total: count.describe('Conversations started in the window with at least one message.'),
        active: count.describe('Of those, currently ACTIVE.'),
        closed: count.describe('Of those, CLOSED (by an admin or idle past the TTL).'),
        unanswered: count.describe('Of those, the last message is from the user (no answer after it).'),
        identified: count.describe('Of those, tied to an end user.'),
        endUsers: count.describe('Distinct end users among them.'),
      })
      .describe('Conversation counts.'),
    messages: z
      .object({
        total: count,
        user: count,
        assistant: count.describe('Assistant messages: the agent\'s answers and people\'s replies.'),
        human: count.describe('Of the assistant messages, replies written by a person.'),
        failed: count.describe('Assistant answers that ended with an error.'),
      })
      .describe('Messages written in the window.'),
    feedback: z.object({ positive: count, negative: count }).describe('Ratings given in the window.'),
    outcomes: z
      .object({
        answered: count.describe('Answers from the knowledge or the conversation.'),
        declined: count.describe('Answers that said the assistant does not know, citing nothing.'),
        action: count.describe('Answers from an action the assistant ran.'),
        error: count.describe('Answers that failed.'),
        answeredRate: rate.describe('(answered + action) / all four. Null without answers that have an outcome.'),
        declinedRate: rate.describe('declined / all four. Null without answers that have an outcome.'),
      })
      .describe('Assistant messages written in the window, by outcome. Answers stored before outcomes were recorded are not counted.'),
    rates: z
      .object({
        answered: rate.describe('Share of conversations whose last message is an answer. Null without conversations.'),
        satisfaction: rate.describe('positive / (positive + negative). Null without ratings.'),
        answerFailure: rate.describe('failed / the agent\'s answers (assistant − human). Null without answers.'),
      })
      .describe('Ratios derived from the counts above.'),
    byDay: z
      .array(
        z.object({
          date: z.string().describe('YYYY-MM-DD (UTC).'),
          conversations: count,
          messages: count,
          positive: count,
          negative: count,
        }),
      )
      .describe('One entry per UTC day of the window, oldest first, zero days included.'),
    byHour: z
      .array(
        z.object({
          hour: z.number().int().min(0).max(23).describe('Hour of the day, UTC.'),
          messages: count.describe("Visitors' messages written in that hour, over the whole window."),
        }),
      )
      .describe('The busiest hours: 24 entries, hour 0 to 23 (UTC), zero hours included.'),
    topQuestions: z
      .array(
        z.object({
          question: z.string().describe('The first question of the group, as asked.'),
          count: count.describe('User messages in the group.'),
          lastAskedAt: z.string().describe('ISO 8601 UTC'),
        }),
      )
      .describe('The 10 most asked questions of the window, grouped when they ask the same thing (as knowledge gaps are), most frequent first.'),
  })
  .meta({ id: 'Analytics', description: 'Counts over the window, with a per-day series.' });
export type Analytics = z.infer<typeof analyticsSchema>;
