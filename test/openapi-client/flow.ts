/**
 * A client of the AnswerDesk API written the way a third party would write one: types generated
 * from the served OpenAPI document with openapi-typescript, calls made with openapi-fetch, the
 * answer stream read with the AI SDK's own parser. src/http/openapi.client.test.ts generates
 * `./api.d.ts` next to a copy of this file, type-checks both with tsc and then runs `run()` against
 * the real server. (Excluded from the project's own typecheck: `./api.js` exists only there.)
 */
import createClient from 'openapi-fetch';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import type { components, paths } from './api.js';

type Schemas = components['schemas'];

export interface FlowResult {
  created: Schemas['Conversation'];
  anonymous: Schemas['Conversation'];
  streamHeader: string | null;
  chunks: UIMessageChunk[];
  answer: UIMessage | undefined;
  list: Schemas['ConversationList'];
  history: Schemas['ConversationMessages'];
  feedback: Schemas['Feedback'];
  notFound: Schemas['Error'];
  chunkKinds: Array<Schemas['UIMessageChunk']['type']>;
}

export async function run(baseUrl: string, apiKey: string): Promise<FlowResult> {
  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': apiKey } });

  // The body is optional: both calls must type-check.
  const anonymous = await client.POST('/api/v1/chat/conversations');
  const created = await client.POST('/api/v1/chat/conversations', { body: { endUserExternalId: 'alice' } });
  if (!created.data || !anonymous.data) throw new Error(`create failed: ${created.response.status}`);
  const conversationId: string = created.data.conversationId;

  // Typed with the generated request type, so that TypeScript keeps the literal `parseAs`.
  const body: Schemas['SendMessageRequest'] = { conversationId, messages: [{ role: 'user', content: 'Hello! How long do refunds take?' }] };
  const sent = await client.POST('/api/v1/chat/messages', { body, parseAs: 'stream' });
  if (!sent.data) throw new Error(`send failed: ${sent.response.status}`);
  const chunks: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: sent.data, schema: uiMessageChunkSchema }).getReader();
  for (;;) {
    const { done, value: result } = await reader.read();
    if (done) break;
    if (!result.success) throw result.error;
    chunks.push(result.value as UIMessageChunk);
  }
  let answer: UIMessage | undefined;
  const replay = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  for await (const message of readUIMessageStream({ stream: replay })) answer = message;

  const list = await client.GET('/api/v1/chat/conversations', { params: { query: { userId: 'alice', limit: 5 } } });
  const history = await client.GET('/api/v1/chat/conversations/{conversationId}', { params: { path: { conversationId } } });
  if (!list.data || !history.data) throw new Error('read failed');

  const start = chunks.find((c) => c.type === 'start');
  const rated = await client.POST('/api/v1/chat/feedback', {
    body: { conversationId, messageId: start?.type === 'start' ? start.messageId : undefined, rating: 'POSITIVE' },
  });
  if (!rated.data) throw new Error(`feedback failed: ${rated.response.status}`);

  const missing = await client.GET('/api/v1/chat/conversations/{conversationId}', { params: { path: { conversationId: 'conv_missing' } } });
  if (!missing.error) throw new Error('expected a 404');

  // The documented chunk kinds are a closed set of names that type-check.
  const chunkKinds: Array<Schemas['UIMessageChunk']['type']> = ['start', 'text-delta', 'tool-output-available', 'source-document', 'finish'];

  return {
    created: created.data,
    anonymous: anonymous.data,
    streamHeader: sent.response.headers.get('x-vercel-ai-ui-message-stream'),
    chunks,
    answer,
    list: list.data,
    history: history.data,
    feedback: rated.data.feedback,
    notFound: missing.error,
    chunkKinds,
  };
}

/** Misuses the compiler must refuse: proof that the generated types are not `any`. */
export function refusedByTheCompiler(client: ReturnType<typeof createClient<paths>>): void {
  // @ts-expect-error `messages` is required.
  void client.POST('/api/v1/chat/messages', { body: { conversationId: 'conv_1' }, parseAs: 'stream' });
  // @ts-expect-error `rating` takes POSITIVE or NEGATIVE only.
  void client.POST('/api/v1/chat/feedback', { body: { conversationId: 'conv_1', rating: 'MEH' } });
  // @ts-expect-error No such path.
  void client.GET('/api/v1/chat/nothing');
  // @ts-expect-error The list needs `userId`.
  void client.GET('/api/v1/chat/conversations', { params: { query: {} } });
  // @ts-expect-error Not a chunk kind.
  const kind: Schemas['UIMessageChunk']['type'] = 'text-deltaa';
  void kind;
  // @ts-expect-error At most these fields: userTokens values are strings.
  const tokens: Schemas['UserTokens'] = { 'x-session': 42 };
  void tokens;
}
