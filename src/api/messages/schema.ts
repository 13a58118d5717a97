import { z } from 'zod';

/** RFC 7230 `token`: the characters a header name may have. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Header values: visible ASCII, space and tab (no CR/LF, so nothing can be smuggled into a request). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

export const MAX_USER_TOKENS = 10;
export const MAX_USER_TOKEN_LENGTH = 4096;

export const messagePart = z
  .object({
    type: z.string().max(64).describe('"text" parts carry the message text; other part types are ignored.'),
    text: z.string().optional(),
  })
  .passthrough();

export const chatMessage = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: z.string().optional().describe('The text. When absent, the text parts are joined (AI SDK useChat messages).'),
    id: z.string().max(256).optional(),
    parts: z.array(messagePart).max(1000).optional(),
  })
  .passthrough()
  .describe('ChatMessage');
export type ChatMessage = z.infer<typeof chatMessage>;

/** The text of a message: `content`, else its `text` parts joined. */
export function messageText(m: Pick<ChatMessage, 'content' | 'parts'>): string {
  if (typeof m.content === 'string') return m.content;
  return (m.parts ?? [])
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
}

export const pageContext = z
  .object({
    url: z.string().max(2048).optional(),
    title: z.string().max(1000).optional(),
    description: z.string().max(2000).optional(),
    referrer: z.string().max(2048).optional(),
    textContent: z.string().max(10_000).optional(),
    headings: z.array(z.string().max(1000)).max(30).optional(),
    buttons: z.array(z.string().max(1000)).max(30).optional(),
    links: z
      .array(z.object({ href: z.string().max(2048), text: z.string().max(1000) }).passthrough())
      .max(80)
      .optional(),
    formFields: z
      .array(
        z
          .object({
            name: z.string().max(256).optional(),
            type: z.string().max(64).optional(),
            label: z.string().max(1000).optional(),
            placeholder: z.string().max(1000).optional(),
          })
          .passthrough(),
      )
      .max(20)
      .optional(),
  })
  .passthrough()
  .describe('PageContext: the page hosting the widget; given to the agent as bounded context.');
export type PageContext = z.infer<typeof pageContext>;

export const userTokens = z
  .record(
    z.string().regex(HEADER_NAME, 'Expected a header name (RFC 7230 token)').max(256),
    z.string().max(MAX_USER_TOKEN_LENGTH).regex(HEADER_VALUE, 'Expected a header value without control characters'),
  )
  .refine((v) => Object.keys(v).length <= MAX_USER_TOKENS, `At most ${MAX_USER_TOKENS} keys`)
  .describe('Headers forwarded to action endpoints for this request only; never stored, logged or shown to the model.');

export const sendMessageBody = z
  .object({
    conversationId: z.string().min(1).max(64).describe('A conversation created with POST /chat/conversations.'),
    projectId: z.string().min(1).max(64).optional().describe("Optional; when given it must be the API key's project."),
    messages: z
      .array(chatMessage)
      .min(1)
      .max(1000)
      .describe('Only the last message is new (it must be the user\'s); the stored history is the truth.'),
    pageContext: pageContext.optional(),
    userTokens: userTokens.optional(),
  })
  .passthrough()
  .superRefine((body, ctx) => {
    const last = body.messages[body.messages.length - 1];
    if (!last) return;
    const path = ['messages', body.messages.length - 1];
    if (last.role !== 'user') ctx.addIssue({ code: 'custom', path: [...path, 'role'], message: 'The last message must have role "user"' });
    else if (messageText(last).trim() === '') ctx.addIssue({ code: 'custom', path: [...path, 'content'], message: 'The last message must have text' });
  });
export type SendMessageBody = z.infer<typeof sendMessageBody>;

/** Response description for the OpenAPI document: the body is an SSE stream, not JSON. */
export const SEND_MESSAGE_STREAM_DESCRIPTION =
  'A server-sent-event stream in the Vercel AI SDK UI message stream format (header x-vercel-ai-ui-message-stream: v1): ' +
  'start (messageId = the stored assistant message id, messageMetadata.conversationId), text and tool parts, ' +
  'source-url / source-document parts, an error chunk on failure, finish, then data: [DONE]. ' +
  'A ":" comment line is sent after 15 s of silence.';
