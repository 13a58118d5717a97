import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from '@ai-sdk/provider';
import type { BuiltinTurn, OfferedTool, ToolOutcome } from './types.js';

/** The name the system prompt gives the company ("You are the support assistant of Acme."). */
const PROJECT_NAME = /support assistant of (.+?)\.(?:\s|$)/;

/** Turns the AI SDK call options into the plain view the decision modules work on. */
export function readTurn(options: Pick<LanguageModelV3CallOptions, 'prompt' | 'tools'>): BuiltinTurn {
  const prompt = options.prompt;
  const system = prompt
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');

  const lastUser = findLastIndex(prompt, (m) => m.role === 'user');
  const userTexts = prompt.filter((m) => m.role === 'user').map(messageText);
  let previousAnswer: string | null = null;
  for (let i = lastUser - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m.role === 'user') break;
    if (m.role === 'assistant') {
      const text = messageText(m);
      if (text) {
        previousAnswer = text;
        break;
      }
    }
  }

  const tools: OfferedTool[] = (options.tools ?? []).flatMap((t) =>
    t.type === 'function' ? [{ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }] : [],
  );

  return {
    question: lastUser >= 0 ? messageText(prompt[lastUser]) : '',
    userTexts,
    previousAnswer,
    system,
    projectName: PROJECT_NAME.exec(system)?.[1] ?? null,
    tools,
    outcomes: readOutcomes(prompt.slice(lastUser + 1)),
  };
}

function messageText(m: LanguageModelV3Prompt[number]): string {
  if (typeof m.content === 'string') return m.content;
  return m.content
    .flatMap((p) => (p.type === 'text' ? [p.text] : []))
    .join('\n')
    .trim();
}

/** Tool calls and their results in the messages after the last user message. */
function readOutcomes(after: LanguageModelV3Prompt): ToolOutcome[] {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const outcomes: ToolOutcome[] = [];
  for (const m of after) {
    if (m.role !== 'assistant' && m.role !== 'tool') continue;
    for (const part of m.content) {
      if (part.type === 'tool-call') calls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
      if (part.type === 'tool-result') {
        const call = calls.get(part.toolCallId);
        outcomes.push({
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: call?.input ?? null,
          ...readOutput(part.output),
        });
      }
    }
  }
  return outcomes;
}

function readOutput(output: LanguageModelV3ToolResultOutput): { output: unknown; isError: boolean } {
  switch (output.type) {
    case 'json':
    case 'text':
      return { output: output.value, isError: false };
    case 'error-json':
    case 'error-text':
      return { output: output.value, isError: true };
    case 'execution-denied':
      return { output: output.reason ?? 'The call was not allowed.', isError: true };
    default:
      return { output: null, isError: true };
  }
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}
