import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput, SharedV3ProviderOptions } from '@ai-sdk/provider';
import { MODEL_HINTS, type CallHints, type ToolHints } from '../../lib/model-hints.js';
import type { BuiltinTurn, OfferedTool, ToolOutcome } from './types.js';

/**
 * Turns the AI SDK call options into the plain view the decision modules work on. The company's
 * name and the actions' examples come from AnswerDesk's provider options (lib/model-hints.ts),
 * never from the wording of the prompt.
 */
export function readTurn(options: Pick<LanguageModelV3CallOptions, 'prompt' | 'tools' | 'providerOptions'>): BuiltinTurn {
  const prompt = options.prompt;

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

  const tools: OfferedTool[] = (options.tools ?? []).flatMap((t) => {
    if (t.type !== 'function') return [];
    const hints = toolHints(t.providerOptions);
    return [{ name: t.name, description: hints?.description ?? t.description ?? '', examples: hints?.examples ?? [], inputSchema: t.inputSchema }];
  });

  return {
    question: lastUser >= 0 ? messageText(prompt[lastUser]) : '',
    userTexts,
    previousAnswer,
    projectName: callHints(options.providerOptions)?.projectName ?? null,
    skills: callHints(options.providerOptions)?.skills ?? [],
    tools,
    outcomes: readOutcomes(prompt.slice(lastUser + 1)),
  };
}

function callHints(options: SharedV3ProviderOptions | undefined): CallHints | null {
  const hints = options?.[MODEL_HINTS];
  if (typeof hints?.projectName !== 'string') return null;
  const skills = Array.isArray(hints.skills) ? hints.skills.filter((s): s is string => typeof s === 'string') : [];
  return { projectName: hints.projectName, skills };
}

function toolHints(options: SharedV3ProviderOptions | undefined): ToolHints | null {
  const hints = options?.[MODEL_HINTS];
  if (typeof hints?.description !== 'string' || !Array.isArray(hints.examples)) return null;
  return { description: hints.description, examples: hints.examples.filter((e): e is string => typeof e === 'string') };
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
