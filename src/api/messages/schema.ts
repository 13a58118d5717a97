import { z } from 'zod';
import { handoffSchema } from '../conversations/schema.js';

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
  .passthrough()
  .meta({ id: 'ChatMessagePart', description: 'An AI SDK UI message part; only `text` parts are read.' });

export const chatMessage = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: z.string().optional().describe('The text. When absent, the text parts are joined (AI SDK useChat messages).'),
    id: z.string().max(256).optional(),
    parts: z.array(messagePart).max(1000).optional(),
  })
  .passthrough()
  .meta({ id: 'ChatMessage', description: 'A message as the client holds it: `content`, or AI SDK `parts`.' });
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
  .meta({ id: 'PageContext', description: 'The page hosting the widget; given to the agent as bounded context.' });
export type PageContext = z.infer<typeof pageContext>;

export const userTokens = z
  .record(
    z.string().regex(HEADER_NAME, 'Expected a header name (RFC 7230 token)').max(256),
    z.string().max(MAX_USER_TOKEN_LENGTH).regex(HEADER_VALUE, 'Expected a header value without control characters'),
  )
  .refine((v) => Object.keys(v).length <= MAX_USER_TOKENS, `At most ${MAX_USER_TOKENS} keys`)
  // The refine validates; JSON Schema cannot see it, so the document states the bound itself.
  .meta({
    id: 'UserTokens',
    description: 'Headers forwarded to action endpoints for this request only; never stored, logged or shown to the model.',
    maxProperties: MAX_USER_TOKENS,
  });

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
    trigger: z
      .enum(['submit-message', 'regenerate-message'])
      .optional()
      .describe(
        'Sent by AI SDK clients. "regenerate-message" (useChat\'s regenerate()) replaces the last answer instead of storing the question again; ' +
          'the replaced answer is kept as a superseded version, hidden from the history and the model.',
      ),
    messageId: z
      .string()
      .max(256)
      .optional()
      .describe('With trigger "regenerate-message": the answer to regenerate (or its question). Anything but the last answer is refused with 400.'),
  })
  .passthrough()
  .superRefine((body, ctx) => {
    const last = body.messages[body.messages.length - 1];
    if (!last) return;
    const path = ['messages', body.messages.length - 1];
    if (last.role !== 'user') ctx.addIssue({ code: 'custom', path: [...path, 'role'], message: 'The last message must have role "user"' });
    else if (messageText(last).trim() === '') ctx.addIssue({ code: 'custom', path: [...path, 'content'], message: 'The last message must have text' });
  })
  .meta({ id: 'SendMessageRequest', description: 'A user message for a conversation. The last item of `messages` must be the user\'s, with text.' });
export type SendMessageBody = z.infer<typeof sendMessageBody>;

const providerMetadata = z
  .record(z.string(), z.record(z.string(), z.unknown()))
  .optional()
  .describe("Provider-specific data, passed through from the model's provider.");

/** One chunk shape: the AI SDK's own fields (its chunks are loose objects: fields may be added). */
const chunk = <T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) =>
  z
    .object({ type: z.literal(type), ...shape })
    .passthrough()
    .describe(description);

const toolFields = {
  toolCallId: z.string(),
  providerExecuted: z.boolean().optional(),
  providerMetadata,
  dynamic: z.boolean().optional(),
};

/**
 * The JSON in each `data:` line of the answer stream: the chunks of the Vercel AI SDK UI message
 * stream (protocol v1) that AnswerDesk sends. For the OpenAPI document and generated clients; the
 * stream itself is written by the AI SDK (`pipeUIMessageStreamToResponse`), and tests parse real
 * streams with both this schema and the SDK's own `uiMessageChunkSchema`.
 */
export const uiMessageChunk = z
  .discriminatedUnion('type', [
    chunk(
      'start',
      {
        messageId: z
          .string()
          .optional()
          .describe('Id of the stored assistant message (`msg_…`): use it for feedback. Absent when the conversation is with a person (no answer follows).'),
        messageMetadata: z.object({ conversationId: z.string() }).passthrough(),
      },
      'First chunk of an answer.',
    ),
    chunk('start-step', {}, 'A model step begins (one per model call; tool calls add steps).'),
    chunk('text-start', { id: z.string(), providerMetadata }, 'A text part begins.'),
    chunk('text-delta', { id: z.string(), delta: z.string(), providerMetadata }, 'More text of the part `id`.'),
    chunk('text-end', { id: z.string(), providerMetadata }, 'The text part `id` is complete.'),
    chunk('reasoning-start', { id: z.string(), providerMetadata }, 'Reasoning begins (models that stream their reasoning).'),
    chunk('reasoning-delta', { id: z.string(), delta: z.string(), providerMetadata }, 'More reasoning text.'),
    chunk('reasoning-end', { id: z.string(), providerMetadata }, 'Reasoning is complete.'),
    chunk(
      'tool-input-start',
      { ...toolFields, toolName: z.string().describe('`search_knowledge` or an action name.'), title: z.string().optional() },
      'A tool call (knowledge search or custom action) begins.',
    ),
    chunk('tool-input-delta', { toolCallId: z.string(), inputTextDelta: z.string() }, 'More of the JSON arguments of a tool call.'),
    chunk('tool-input-available', { ...toolFields, toolName: z.string(), input: z.unknown(), title: z.string().optional() }, 'The complete arguments of a tool call.'),
    chunk(
      'tool-input-error',
      { ...toolFields, toolName: z.string(), input: z.unknown(), errorText: z.string(), title: z.string().optional() },
      'The model called a tool with invalid arguments.',
    ),
    chunk(
      'tool-output-available',
      { ...toolFields, output: z.unknown(), preliminary: z.boolean().optional() },
      'The result of a tool call (passages found; the action endpoint’s status and body).',
    ),
    chunk('tool-output-error', { ...toolFields, errorText: z.string() }, 'A tool call failed (timeout, refused address, network).'),
    chunk('source-url', { sourceId: z.string(), url: z.string(), title: z.string().optional(), providerMetadata }, 'A cited web page.'),
    chunk(
      'source-document',
      { sourceId: z.string(), mediaType: z.string(), title: z.string(), filename: z.string().optional(), providerMetadata },
      'A cited document (pasted or uploaded knowledge).',
    ),
    chunk('file', { url: z.string(), mediaType: z.string(), providerMetadata }, 'A file the model produced.'),
    chunk('error', { errorText: z.string().describe('A safe message; details are only in the server log.') }, 'The answer failed; it is stored with status `error`.'),
    chunk(
      'data-handoff',
      { data: handoffSchema.describe("The conversation's handoff state.") },
      'The conversation is with a person (or waiting for one): the message was stored and the agent does not answer. Sent between `start` and `finish`.',
    ),
    chunk('finish-step', {}, 'A model step ends.'),
    chunk(
      'finish',
      {
        finishReason: z.enum(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other']).optional(),
        messageMetadata: z.unknown().optional(),
      },
      'Last chunk of an answer, before `data: [DONE]`.',
    ),
  ])
  .meta({
    id: 'UIMessageChunk',
    description:
      'One event of the answer stream: the JSON of a `data:` line (Vercel AI SDK UI message stream, protocol v1). AI SDK clients (`useChat`, `parseJsonEventStream` with `uiMessageChunkSchema`, `readUIMessageStream`) read it as it is.',
  });
export type UIMessageChunkDoc = z.infer<typeof uiMessageChunk>;

/** The answer stream as the OpenAPI document describes it. */
export const SEND_MESSAGE_STREAM_DESCRIPTION =
  'The answer, streamed as server-sent events: the Vercel AI SDK UI message stream (header `x-vercel-ai-ui-message-stream: v1`). ' +
  'Each event is one `data:` line holding one `UIMessageChunk` as JSON. In order: `start` (`messageId` = the stored assistant message id, ' +
  '`messageMetadata.conversationId`), then per model step `start-step`, text (`text-start`, `text-delta`…, `text-end`), tool calls ' +
  '(`tool-input-start`, `tool-input-delta`, `tool-input-available`, `tool-output-available` or `tool-output-error`) and citations ' +
  '(`source-url`, `source-document`), `finish-step`; then `finish`. While the conversation is handed off to a person the stream is only `start`, `data-handoff` (the handoff state) and `finish`.  A failure sends an `error` chunk with a safe message (an answer that ' +
  'could not even be set up, e.g. a model without its API key, is that chunk alone). The stream ends with the line `data: [DONE]`. ' +
  'Lines starting with `:` are comments (`: stream-open` first, then one after every 15 s of silence by default): ignore them.';

export const sendMessageStream = z.string().meta({
  description: 'Server-sent events; the JSON of each `data:` line (except the final `[DONE]`) is a `UIMessageChunk`.',
  contentMediaType: 'text/event-stream',
  // The schema of each event's data, for readers and generated clients (components.schemas.UIMessageChunk).
  contentSchema: { $ref: '#/components/schemas/UIMessageChunk' },
});

export const SEND_MESSAGE_STREAM_EXAMPLE = [
  ': stream-open',
  '',
  'data: {"type":"start","messageId":"msg_3xJ9bQ2kR7vT1mN8pL4wZa","messageMetadata":{"conversationId":"conv_8fK2nP5qW1rT7yU3iO9aSd"}}',
  '',
  'data: {"type":"start-step"}',
  '',
  'data: {"type":"text-start","id":"txt-0"}',
  '',
  'data: {"type":"text-delta","id":"txt-0","delta":"Refunds take 5 days."}',
  '',
  'data: {"type":"text-end","id":"txt-0"}',
  '',
  'data: {"type":"finish-step"}',
  '',
  'data: {"type":"finish","finishReason":"stop"}',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');
