import { tool, zodSchema, type ToolSet } from 'ai';
import { z } from 'zod';
import { handoffPolicy, requestHandoff } from '../conversations/handoff.js';
import type { Kysely } from 'kysely';
import type { Project } from '../projects/project.js';
import type { Database } from '../store/index.js';

/** Name of the handoff tool, as the model (and the builtin model) sees it. */
export const HANDOFF_TOOL = 'request_handoff';

/** What the agent tells the user once a person has been asked for (the builtin model says it too). */
export const HANDOFF_REPLY = "I've asked a person from our team to take over this conversation. They'll reply right here, so feel free to add any details in the meantime.";

/** The tool's input, made once so its JSON Schema is converted once (see the knowledge tool's). */
const handoffInput = zodSchema(
  z.object({
    reason: z.string().min(1).max(500).describe('What the user needs a person for, in one sentence.'),
  }),
);

/**
 * The `request_handoff` tool, offered when the project lets conversations go to a person: the
 * conversation waits for a person from then on, and the agent stops answering in it until someone
 * hands it back.
 */
export function handoffTools(ctx: { db: Kysely<Database>; project: Project; conversationId: string }): ToolSet {
  if (!handoffPolicy(ctx.project).enabled) return {};
  return {
    [HANDOFF_TOOL]: tool({
      description:
        'Hand this conversation to a person from the support team. Use it when the user asks to talk to a human, or when they need help you cannot give and want a person. ' +
        'After calling it, tell the user a person will reply here; do not keep answering their questions.',
      inputSchema: handoffInput,
      execute: async ({ reason }) => {
        const { state } = await requestHandoff(ctx.db, { id: ctx.conversationId }, { reason, via: 'agent' });
        return { handoff: state, instructions: HANDOFF_REPLY };
      },
    }),
  };
}
