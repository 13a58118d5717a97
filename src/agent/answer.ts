import {
  APICallError,
  createUIMessageStream,
  RetryError,
  stepCountIs,
  streamText,
  type LanguageModelUsage,
  type StreamTextTransform,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import type { FastifyBaseLogger } from 'fastify';
import type { PageContext } from '../api/messages/schema.js';
import { appendMessage, listMessages } from '../api/conversations/service.js';
import type { Project } from '../api/projects/schema.js';
import type { AppDeps } from '../http/context.js';
import { KNOWLEDGE_TOOL } from './builtin/knowledge.js';
import { ModelConfigError, modelSpecFor, resolveModel } from './models.js';
import { buildSystemPrompt, trimHistory, type PromptSkill, type VerifiedEndUser } from './prompt.js';
import { distinctSources, readHits, type CitedSource } from './sources.js';
import { buildTools, toolFactories, type ToolContext, type ToolFactory } from './tools.js';

/** Model calls in one answer: tool calls and the final text together. */
export const MAX_STEPS = 6;

export interface AnswerRequest {
  deps: AppDeps;
  project: Project;
  conversation: { id: string; project_id: string };
  endUser: ToolContext['endUser'];
  /** Name and e-mail of the end user, given to the model only when the identity was proven. */
  verifiedUser: VerifiedEndUser | null;
  userTokens: Record<string, string>;
  pageContext?: PageContext;
  /** Id the stored assistant message will have; sent at once in the `start` chunk. */
  assistantMessageId: string;
  log: FastifyBaseLogger;
  /** Runs after the assistant message is stored (or could not be): releases the conversation. */
  onSettled?: () => Promise<void>;
  factories?: readonly ToolFactory[];
}

/** Messages the client sees on failure; the cause goes to the log only. */
export const SAFE_ERRORS = {
  timeout: 'The AI model took too long to answer. Please try again.',
  upstream: 'The AI model service is unavailable right now. Please try again later.',
  config: 'The assistant is not set up correctly yet. Please contact the site owner.',
  other: 'Something went wrong while answering. Please try again.',
} as const;

export function safeErrorMessage(error: unknown): string {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (cause instanceof ModelConfigError) return SAFE_ERRORS.config;
  if (isTimeout(cause)) return SAFE_ERRORS.timeout;
  if (APICallError.isInstance(cause)) return SAFE_ERRORS.upstream;
  return SAFE_ERRORS.other;
}

function isTimeout(error: unknown): boolean {
  const e = error as { name?: string; message?: string } | null;
  return e?.name === 'TimeoutError' || /timeout|timed out/i.test(e?.message ?? '');
}

/**
 * Produces one answer as an AI SDK UI message stream: loads the stored history and the project's
 * skills, runs the model with every offered tool in a multi-step loop, turns knowledge hits into
 * source parts, and stores the assistant message (text, parts, sources, model, usage, status) when
 * the stream ends, whatever ended it. The stream never errors: failures become an `error` chunk.
 * Read it to its end (the HTTP layer does, even after the client left) so the answer is stored.
 */
export function streamAnswer(req: AnswerRequest): ReadableStream<UIMessageChunk> {
  const { deps, project, conversation, log } = req;
  const config = deps.config;
  const spec = modelSpecFor(project, config);
  const done = new AbortController();
  let failed = false;
  const usage: LanguageModelUsage[] = [];

  const onError = (error: unknown): string => {
    failed = true;
    log.warn({ err: error, conversationId: conversation.id, model: spec }, 'answer failed');
    return safeErrorMessage(error);
  };

  return createUIMessageStream<UIMessage>({
    onError,
    generateId: () => req.assistantMessageId,
    async execute({ writer }) {
      const model = resolveModel(spec, config);
      const ctx: ToolContext = {
        deps,
        project,
        conversationId: conversation.id,
        endUser: req.endUser,
        userTokens: req.userTokens,
        abortSignal: AbortSignal.any([done.signal, AbortSignal.timeout(config.ANSWERDESK_MODEL_TIMEOUT_MS)]),
        log,
      };
      const [tools, history, skills] = await Promise.all([
        buildTools(ctx, req.factories ?? toolFactories),
        listMessages(deps.store.db, conversation.id),
        enabledSkills(deps, project.id),
      ]);
      const system = buildSystemPrompt({
        project,
        pageContext: req.pageContext,
        verifiedUser: req.verifiedUser,
        skills,
      });
      const result = streamText({
        model,
        system,
        // Failed answers stay in the stored history for people, not for the model: it would build on
        // half an answer.
        messages: trimHistory(history.filter((m) => m.status !== 'error').map((m) => ({ role: m.role, content: m.content }))),
        tools,
        stopWhen: stepCountIs(MAX_STEPS),
        maxRetries: 1,
        abortSignal: done.signal,
        timeout: { totalMs: config.ANSWERDESK_MODEL_TIMEOUT_MS, chunkMs: config.ANSWERDESK_MODEL_IDLE_TIMEOUT_MS },
        experimental_transform: sourcesFromKnowledge,
        onStepFinish: (step) => void usage.push(step.usage),
        // Errors are reported (once) through toUIMessageStream's onError below.
        onError: () => {},
      });
      // The answer runs to its end even if nobody reads the UI stream any more.
      result.consumeStream({ onError: () => {} });
      writer.merge(
        result
          .toUIMessageStream({
            sendSources: true,
            generateMessageId: () => req.assistantMessageId,
            messageMetadata: ({ part }) => (part.type === 'start' ? { conversationId: conversation.id } : undefined),
            onError,
          })
          .pipeThrough(timeoutAsError(() => (failed = true))),
      );
    },
    async onFinish({ responseMessage }) {
      done.abort();
      try {
        await storeAnswer(req, spec, responseMessage, failed, sumUsage(usage));
      } catch (err) {
        log.error({ err, conversationId: conversation.id }, 'could not store the assistant message');
      } finally {
        await req.onSettled?.().catch((err: unknown) => log.error({ err }, 'could not release the conversation'));
      }
    },
  });
}

/**
 * streamText reports its own timeouts as an `abort` chunk; for the client an answer that timed out
 * failed, so it becomes an `error` chunk with a safe message (nothing else aborts an answer: a client
 * that leaves does not stop it).
 */
function timeoutAsError(markFailed: () => void): TransformStream<UIMessageChunk, UIMessageChunk> {
  return new TransformStream({
    transform(chunk, controller) {
      if (chunk.type === 'abort') {
        markFailed();
        controller.enqueue({ type: 'error', errorText: SAFE_ERRORS.timeout });
        return;
      }
      if (chunk.type === 'error') markFailed();
      controller.enqueue(chunk);
    },
  });
}

/** After each knowledge search, one source part per source it found (once per answer). */
const sourcesFromKnowledge: StreamTextTransform<ToolSet> = () => {
  const seen = new Set<string>();
  return new TransformStream({
    transform(part, controller) {
      controller.enqueue(part);
      if (part.type !== 'tool-result' || part.toolName !== KNOWLEDGE_TOOL || part.preliminary) return;
      for (const s of distinctSources(readHits(part.output))) {
        if (seen.has(s.sourceId)) continue;
        seen.add(s.sourceId);
        controller.enqueue(
          s.type === 'url' && s.url
            ? { type: 'source', sourceType: 'url', id: s.sourceId, url: s.url, title: s.title }
            : { type: 'source', sourceType: 'document', id: s.sourceId, mediaType: 'text/plain', title: s.title },
        );
      }
    },
  });
};

async function enabledSkills(deps: AppDeps, projectId: string): Promise<PromptSkill[]> {
  return deps.store.db
    .selectFrom('skills')
    .select(['name', 'description', 'instructions'])
    .where('project_id', '=', projectId)
    .where('enabled', '=', 1)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

function sumUsage(steps: LanguageModelUsage[]): { inputTokens: number; outputTokens: number; totalTokens: number } | null {
  if (steps.length === 0) return null;
  const input = steps.reduce((n, u) => n + (u.inputTokens ?? 0), 0);
  const output = steps.reduce((n, u) => n + (u.outputTokens ?? 0), 0);
  return { inputTokens: input, outputTokens: output, totalTokens: input + output };
}

/** Stores what the answer produced: its text, its UI parts (tool calls, sources), model, usage, status. */
async function storeAnswer(
  req: AnswerRequest,
  model: string,
  message: UIMessage,
  failed: boolean,
  usage: ReturnType<typeof sumUsage>,
): Promise<void> {
  const parts = message.parts.filter((p) => p.type !== 'step-start');
  const content = parts
    .flatMap((p) => (p.type === 'text' && p.text.trim() ? [p.text.trim()] : []))
    .join('\n\n');
  const sources = new Map<string, CitedSource>();
  for (const p of parts) {
    if (p.type === 'source-url') sources.set(p.sourceId, { sourceId: p.sourceId, type: 'url', url: p.url, title: p.title ?? p.url });
    if (p.type === 'source-document') sources.set(p.sourceId, { sourceId: p.sourceId, type: 'document', title: p.title });
  }
  await appendMessage(req.deps.store.db, req.conversation, {
    id: req.assistantMessageId,
    role: 'assistant',
    content,
    parts,
    sources: sources.size > 0 ? [...sources.values()] : null,
    status: failed ? 'error' : 'complete',
    model,
    usage,
  });
}
