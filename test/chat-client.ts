import { AbstractChat, DefaultChatTransport, type ChatState, type ChatStatus, type UIMessage } from 'ai';

/** The plain-array chat state a framework binding (`@ai-sdk/react`'s `Chat`) keeps in its store. */
class ArrayChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = this.messages.map((m, i) => (i === index ? message : m)));
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** An AI SDK chat client (what `useChat` drives) on a plain state, so tests run it without a UI framework. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(options: ConstructorParameters<typeof AbstractChat<UIMessage>>[0]) {
    super(options);
  }
}

export interface ChatClient {
  chat: TestChat;
  /** The JSON body of every request the transport sent, in order. */
  requests: Array<Record<string, unknown>>;
}

/**
 * An AI SDK `useChat`-style client talking to the real server: `DefaultChatTransport` pointed at
 * `POST /chat/messages` over a real port, with the key header and `conversationId` in the body the
 * way the docs tell users to add them. Requests are recorded as sent, then go out unchanged.
 */
export function chatClient(options: { baseUrl: string; key: string; conversationId: string }): ChatClient {
  const requests: ChatClient['requests'] = [];
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${options.baseUrl}/api/v1/chat/messages`,
    headers: { 'x-api-key': options.key },
    body: { conversationId: options.conversationId },
    fetch: async (input, init) => {
      requests.push(JSON.parse(String(init?.body)));
      return fetch(input, init);
    },
  });
  return { chat: new TestChat({ id: options.conversationId, transport, state: new ArrayChatState() }), requests };
}
