import { z } from 'zod';
import { wholeNumberParam } from '../../lib/query-number.js';
import { knowledgeSource } from '../knowledge/schema.js';
import { projectParams } from '../projects/admin-schema.js';

export const gapsQuery = z.object({
  days: wholeNumberParam(1, 365, 30).describe('How many days back to look (1..365, default 30).'),
});

export const gapReportSchema = z
  .object({
    id: z.string().describe('`gap_…`; stable from one read to the next.'),
    question: z.string().describe('The first question of the group, as asked.'),
    count: z.number().int().describe('Times it was asked in the window and not answered.'),
    lastAskedAt: z.string().describe('ISO 8601 UTC'),
    examples: z
      .array(z.object({ conversationId: z.string(), messageId: z.string().describe("The user's message."), text: z.string() }))
      .describe('The newest occurrences (up to 5).'),
    reasons: z
      .object({
        declined: z.number().int().describe('Occurrences the agent declined.'),
        negativeFeedback: z.number().int().describe('Occurrences whose answer was rated NEGATIVE.'),
      })
      .describe('Why the occurrences count as unanswered; one may have both.'),
  })
  .meta({ id: 'KnowledgeGap', description: 'A question the agent could not answer, with the other ways it was asked.' });

export const gapList = z
  .object({ gaps: z.array(gapReportSchema).describe('Open gaps, most frequent first.') })
  .meta({ id: 'KnowledgeGapList', description: "The project's knowledge gaps." });

export const gapSchema = z
  .object({
    id: z.string(),
    question: z.string(),
    status: z.enum(['open', 'resolved', 'dismissed']),
    answer: z.string().nullable().describe('The answer given when it was resolved.'),
    faqSourceId: z.string().nullable().describe('The FAQ source the answer was added to.'),
    closedAt: z.string().nullable().describe('When it was resolved or dismissed; kept when a resolved gap opens again, which then counts only what was asked since.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'KnowledgeGapRecord', description: 'A stored gap and what was done about it.' });
export type Gap = z.infer<typeof gapSchema>;

export const gapParams = projectParams.extend({ gapId: z.string().min(1).max(64).describe('Gap id (`gap_…`).') });

export const resolveGapBody = z
  .object({ answer: z.string().trim().min(1).max(10_000).describe('The answer to add to the FAQ.') })
  .strict()
  .meta({ id: 'ResolveGapRequest', description: 'The answer to the gap’s question.' });

export const gapResolved = z
  .object({ gap: gapSchema, source: knowledgeSource.describe('The FAQ source the answer went to; it is being indexed (`status` pending) and answers once ready.') })
  .meta({ id: 'ResolveGapResponse', description: 'The resolved gap and its FAQ source.' });

export const gapWrapped = z.object({ gap: gapSchema }).meta({ id: 'KnowledgeGapResponse', description: 'A gap.' });
