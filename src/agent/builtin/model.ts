import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import { base62 } from '../../lib/ids.js';
import { MODEL_HINTS } from '../../lib/model-hints.js';
import { estimateTokens } from '../tokens.js';
import { actionsSkill } from './actions.js';
import { handoffSkill } from './handoff.js';
import { knowledgeSkill } from './knowledge.js';
import { smallTalkSkill } from './small-talk.js';
import { readTurn } from './turn.js';
import type { BuiltinDecision, BuiltinSkill, BuiltinTurn } from './types.js';

export const BUILTIN_MODEL_ID = 'builtin';

/**
 * Decision modules in order. A request for a person first (it must never be answered from the help
 * content), then small talk (it never needs a tool), then actions (a request to do something beats
 * a search), then knowledge (search and answer from passages).
 */
export const DEFAULT_SKILLS: readonly BuiltinSkill[] = [handoffSkill, smallTalkSkill, actionsSkill, knowledgeSkill];

const CANNOT_ANSWER =
  "I'm sorry, I can't answer that. I don't have help articles or tools that cover it here, and I'd rather " +
  'tell you so than guess. Could you ask in a different way, or contact the team directly?';

/** Decides the next step of an answer from the turn: the first skill that has an opinion wins. */
export function decide(turn: BuiltinTurn, skills: readonly BuiltinSkill[] = DEFAULT_SKILLS): BuiltinDecision {
  for (const skill of skills) {
    const decision = skill(turn);
    if (decision) return decision;
  }
  return { kind: 'answer', text: CANNOT_ANSWER, declined: true };
}

/**
 * An offline, deterministic model behind the AI SDK language-model interface. It goes through the
 * same multi-step tool loop as a real model: it reads the tools offered and the prompt, emits a tool
 * call, and answers from the tool results on the next step. No key, no network.
 */
export class BuiltinModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = 'answerdesk';
  readonly modelId = BUILTIN_MODEL_ID;
  readonly supportedUrls = {};
  constructor(private readonly skills: readonly BuiltinSkill[] = DEFAULT_SKILLS) {}

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    options.abortSignal?.throwIfAborted();
    const { decision, usage, callId } = this.step(options);
    const content: LanguageModelV3Content[] =
      decision.kind === 'call'
        ? [{ type: 'tool-call', toolCallId: callId, toolName: decision.toolName, input: JSON.stringify(decision.input) }]
        : [{ type: 'text', text: decision.text }];
    return { content, finishReason: finishReason(decision), usage, warnings: [], providerMetadata: outcomeMetadata(decision) };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    options.abortSignal?.throwIfAborted();
    const { decision, usage, callId } = this.step(options);
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: `builtin-${callId}`, modelId: BUILTIN_MODEL_ID, timestamp: new Date() },
    ];
    if (decision.kind === 'call') {
      const input = JSON.stringify(decision.input);
      parts.push(
        { type: 'tool-input-start', id: callId, toolName: decision.toolName },
        { type: 'tool-input-delta', id: callId, delta: input },
        { type: 'tool-input-end', id: callId },
        { type: 'tool-call', toolCallId: callId, toolName: decision.toolName, input },
      );
    } else {
      for (const source of decision.sources ?? []) {
        parts.push(
          source.type === 'url' && source.url
            ? { type: 'source', sourceType: 'url', id: source.sourceId, url: source.url, title: source.title }
            : { type: 'source', sourceType: 'document', id: source.sourceId, mediaType: 'text/plain', title: source.title },
        );
      }
      const id = `txt-${callId}`;
      parts.push({ type: 'text-start', id });
      for (const delta of textDeltas(decision.text)) parts.push({ type: 'text-delta', id, delta });
      parts.push({ type: 'text-end', id });
    }
    parts.push({ type: 'finish', finishReason: finishReason(decision), usage, providerMetadata: outcomeMetadata(decision) });

    // Pull-based, so a consumer that reads slowly is not flooded; an abort ends the stream.
    let i = 0;
    const signal = options.abortSignal;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      pull(controller) {
        if (signal?.aborted) {
          controller.error(signal.reason);
          return;
        }
        if (i < parts.length) controller.enqueue(parts[i++]);
        if (i >= parts.length) controller.close();
      },
    });
    return { stream };
  }

  private step(options: LanguageModelV3CallOptions): { decision: BuiltinDecision; usage: LanguageModelV3Usage; callId: string } {
    const turn = readTurn(options);
    const decision = decide(turn, this.skills);
    const promptText = options.prompt
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
      .join('\n');
    const outputText = decision.kind === 'call' ? JSON.stringify(decision.input) : decision.text;
    const inputTokens = estimateTokens(promptText);
    const outputTokens = estimateTokens(outputText);
    return {
      decision,
      callId: `call_${base62(16)}`,
      usage: {
        inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
      },
    };
  }
}

/** A decline is reported in AnswerDesk's namespace of the provider metadata; the answer loop stores it as the outcome. */
function outcomeMetadata(decision: BuiltinDecision): SharedV3ProviderMetadata | undefined {
  return decision.kind === 'answer' && decision.declined ? { [MODEL_HINTS]: { outcome: 'declined' } } : undefined;
}

function finishReason(decision: BuiltinDecision): LanguageModelV3FinishReason {
  return decision.kind === 'call' ? { unified: 'tool-calls', raw: 'tool_calls' } : { unified: 'stop', raw: 'stop' };
}

/** Splits an answer into deltas of a few words each, the way a real model streams. */
export function textDeltas(text: string, wordsPerDelta = 3): string[] {
  const tokens = text.match(/\S+\s*|\s+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i += wordsPerDelta) out.push(tokens.slice(i, i + wordsPerDelta).join(''));
  return out;
}

/** A builtin model; it holds no state, so one instance can serve every answer. */
export function createBuiltinModel(skills?: readonly BuiltinSkill[]): BuiltinModel {
  return new BuiltinModel(skills);
}
