import { z } from 'zod';
import type { MediaResponse } from '../../http/openapi.js';
import { adminConversationSchema } from './admin-schema.js';
import { messageSchema } from './schema.js';

const personName = z.string().trim().min(1).max(120);

export const assignBody = z
  .object({
    assignee: z
      .object({
        id: z.string().trim().min(1).max(128).optional().describe('Your id of the person (for example the dashboard user id).'),
        name: personName.describe('Shown to the end user beside the replies.'),
      })
      .strict()
      .optional()
      .describe('The person taking the conversation (admin token and secret keys). A signed-in dashboard user leaves it out and takes it themselves.'),
  })
  .strict()
  .nullish()
  .meta({ id: 'AssignConversationRequest', description: 'Who takes the conversation over; optional for a signed-in dashboard user.' });

export const humanMessageBody = z
  .object({
    content: z.string().trim().min(1).max(20_000).describe('The reply, as the end user will read it (Markdown).'),
    author: z
      .object({
        id: z.string().trim().min(1).max(128).optional(),
        name: personName,
      })
      .strict()
      .optional()
      .describe('Who writes. Default: the person the conversation is assigned to, else "Support team".'),
  })
  .strict()
  .meta({ id: 'HumanMessageRequest', description: "A person's reply in a conversation." });

export const humanMessageCreated = z
  .object({ message: messageSchema, conversation: adminConversationSchema })
  .meta({ id: 'HumanMessageResponse', description: 'The stored reply (role `assistant`, author `human`) and the conversation after it.' });

export const lastEventIdHeader = z.object({
  'Last-Event-ID': z
    .string()
    .optional()
    .describe('The `id` of the last `message` event received: the stream starts by replaying the messages stored after it.'),
});

export const CONVERSATION_EVENTS_EXAMPLE = [
  'retry: 2000',
  '',
  'event: handoff',
  'data: {"conversationId":"conv_…","handoff":{"status":"active","assignee":{"id":null,"name":"Dana"},"acceptedAt":"2025-01-31T10:00:00.000Z","requestedAt":"2025-01-31T09:59:00.000Z","reason":"Talk to a person","via":"user"}}',
  '',
  'id: 7',
  'event: message',
  'data: {"conversationId":"conv_…","message":{"id":"msg_…","role":"assistant","content":"Hi, Dana here. Let me check your order.","createdAt":"2025-01-31T10:00:05.000Z","status":"complete","author":{"type":"human","id":null,"name":"Dana"}}}',
  '',
  ': keep-alive',
  '',
  '',
].join('\n');

export const conversationEventsResponse: MediaResponse = {
  description:
    'Server-sent events until the client leaves: `handoff` (`{conversationId, handoff}`) once on connect and on every change; `message` (`{conversationId, message}`, `id` = the message\'s position) for each message stored; `closed` (`{conversationId, status: "CLOSED", closedAt}`, closedAt null when it expired by idling) once the conversation is closed, at once on connect when it already is; a `: keep-alive` comment after 15 s of silence. The stream ends once the key that opened it is revoked, or once its identity proof would be refused where the project requires one (HMAC secret rotated, token expired); checked with each keep-alive.',
  content: { 'text/event-stream': { schema: z.string(), example: CONVERSATION_EVENTS_EXAMPLE } },
};

export const projectEventsResponse: MediaResponse = {
  description:
    'Server-sent events until the client leaves: `conversation` (`{conversationId, type: "message"|"handoff"|"closed", seq?}`) whenever a conversation of the project gets a message, its handoff changes or it is closed; read the conversation again to see what. Live only (no replay); `: keep-alive` comments. The stream ends once the credential that opened it would be refused (session ended, project membership or role lost, key revoked; checked with each keep-alive), and the reconnect gets that 401 or 404.',
  content: {
    'text/event-stream': {
      schema: z.string(),
      example: 'retry: 2000\n\n: ready\n\nevent: conversation\ndata: {"conversationId":"conv_…","type":"handoff"}\n\n',
    },
  },
};
