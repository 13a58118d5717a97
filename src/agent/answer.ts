import {
  APICallError,
  createUIMessageStream,
  RetryError,
  stepCountIs,
  streamText,
  type LanguageModelUsage,
  type StreamTextTransform,
  type TextStreamPart,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import type { FastifyBaseLogger } from 'fastify';
import { appendMessage, listHistory, messageExists, type HistoryMessage, type MessageRow } from '../conversations/messages.js';
import { KNOWLEDGE_TOOL } from '../knowledge/tool.js';
import { MODEL_HINTS } from '../lib/model-hints.js';
import { storableDeep, withoutNul } from '../lib/nul.js';
import type { Project } from '../projects/project.js';
import { retryWhileUnavailable } from '../store/faults.js';
import { isUniqueViolation } from '../store/index.js';
import { MESSAGE_OUTCOMES, type MessageOutcome } from '../store/schema.js';
import { HANDOFF_TOOL } from './handoff-tool.js';
import { AnswerInterruptedError } from './in-flight.js';
import { ModelConfigError, modelSpecFor } from './models.js';
import { projectReads, type ProjectReads } from './project-reads.js';
import { buildSystemPrompt, callHints, trimHistory, type PageContext, type VerifiedEndUser } from './prompt.js';
import { usedSources, numberedHits, type CitedSource, type NumberedHit } from './sources.js';
import { buildTools, toolFactories, type AgentDeps, type ToolContext, type ToolFactory } from './tools.js';

/** Model calls in one answer: tool calls and the final text together. */
export const MAX_STEPS = 6;
/** How long storing a finished answer is retried while the database is unavailable. */
const STORE_RETRY_MS = 30_000;
/**
 * Why an answer's signal is aborted once it has ended (for anything it left running). One shared
 * reason: `abort()` without one builds a DOMException, and its stack trace, per answer.
 */
const ANSWER_ENDED = new Error('The answer has ended');

export interface AnswerRequest {
  deps: AgentDeps;
  project: Project;
  conversation: { id: string; project_id: string };
  endUser: ToolContext['endUser'];
  /** Name and e-mail of the end user, given to the model only when the identity was proven. */
  verifiedUser: VerifiedEndUser | null;
  userTokens: Record<string, string>;
  pageContext?: PageContext;
  /** Id the stored assistant message will have; sent at once in the `start` chunk. */
  assistantMessageId: string;
  /** A regenerate: the answer this one replaces. The model does not see it; it is superseded when this one is stored. */
  supersedes?: string;
  log: FastifyBaseLogger;
  /** The request's id, sent to action endpoints as `X-Request-Id` so their logs meet ours. */
  requestId?: string;
  /** Once the answer has ended, before it is stored: its model spec, token usage (summed over its steps; null when the model reported none) and outcome. */
  onFinished?: (summary: AnswerSummary) => void;
  /**
   * Runs after the assistant message is stored (or could not be): releases the conversation. Given
   * the stored row when this answer wrote it, so what follows need not read it back.
   */
  onSettled?: (stored?: MessageRow) => Promise<void>;
  /** Aborted when the node must stop the answer (a shutdown that cannot wait): it ends as failed. */
  abortSignal?: AbortSignal;
  factories?: readonly ToolFactory[];
  /** Where the project's enabled skills and actions are read; the HTTP layer passes its per-node cached reads. Default: the database. */
  reads?: ProjectReads;
  /** The conversation's current messages as the send read them (oldest first, the question included); read from the store when absent. */
  history?: readonly HistoryMessage[];
  /**
   * Replaces the conversation's stored messages: the history the model sees, and what receives the
   * finished answer instead of storing it. An eval run answers this way and stores nothing.
   */
  transcript?: {
    history: Array<{ role: 'user' | 'assistant'; content: string }>;
    keep(answer: FinishedAnswer): void;
  };
}

/** What an answer produced, as stored on the assistant message (or kept by a transcript). */
export interface FinishedAnswer {
  /** The answer's text parts joined. */
  content: string;
  /** UI parts: text, tool calls, sources. */
  parts: UIMessage['parts'];
  sources: CitedSource[];
  outcome: MessageOutcome;
  failed: boolean;
  model: string;
  usage: ReturnType<typeof sumUsage>;
}

/** What an answer came to, for the node's metrics. */
export interface AnswerSummary {
  model: string;
  usage: { inputTokens: number; outputTokens: number } | null;
  outcome: MessageOutcome;
}

/** Messages the client sees on failure; the cause goes to the log only. */
export const SAFE_ERRORS = {
  timeout: 'The AI model took too long to answer. Please try again.',
  upstream: 'The AI model service is unavailable right now. Please try again later.',
  config: 'The assistant is not set up correctly yet. Please contact the site owner.',
  interrupted: 'The service is restarting. Please send your message again.',
  other: 'Something went wrong while answering. Please try again.',
} as const;

export function safeErrorMessage(error: unknown): string {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (cause instanceof ModelConfigError) return SAFE_ERRORS.config;
  if (cause instanceof AnswerInterruptedError) return SAFE_ERRORS.interrupted;
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
 *
 * The stream is returned at once; the HTTP layer uses {@link startAnswer}, which resolves to the same
 * stream once the answer is set up and saves the stage that bridges the two.
 */
export function streamAnswer(req: AnswerRequest): ReadableStream<UIMessageChunk> {
  const ready = startAnswer(req);
  let reader: ReadableStreamDefaultReader<UIMessageChunk> | undefined;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      reader ??= (await ready).getReader();
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      reader ??= (await ready).getReader();
      await reader.cancel(reason);
    },
  });
}

/**
 * {@link streamAnswer} without the bridge: resolves, once the history, tools and skills are loaded,
 * to the UI message stream of `toUIMessageStream` itself (one chain of the AI SDK's stages, nothing
 * of ours on top). It never rejects: a failure while setting up resolves to a stream holding its
 * `error` chunk, and the attempt is stored as failed.
 */
export async function startAnswer(req: AnswerRequest): Promise<ReadableStream<UIMessageChunk>> {
  const { deps, project, conversation, log } = req;
  const config = deps.config;
  const spec = modelSpecFor(project, config);
  const done = new AbortController();
  // The whole answer's deadline. Not the SDK's `timeout.totalMs`: that is an AbortSignal.timeout,
  // which cannot be cancelled and keeps every finished answer reachable until it fires (about 40 KB
  // of heap per answer for ANSWERDESK_MODEL_TIMEOUT_MS). This timer is cleared when the answer ends.
  const deadline = setTimeout(() => done.abort(new AnswerTimeoutError('The answer took too long')), config.ANSWERDESK_MODEL_TIMEOUT_MS);
  deadline.unref();
  const stop = () => done.abort(req.abortSignal?.reason);
  if (req.abortSignal?.aborted) stop();
  else req.abortSignal?.addEventListener('abort', stop, { once: true });
  let failed = false;
  const usage: LanguageModelUsage[] = [];
  // The outcome a model reports itself (the builtin model says when it declined).
  let reported: MessageOutcome | null = null;

  const onError = (error: unknown): string => {
    // Stopped by the node mid-stream: the model's request fails with an abort of its own, but the
    // client should hear why.
    const cause = done.signal.reason instanceof AnswerInterruptedError ? done.signal.reason : error;
    // The AI SDK reports a failure a second time once its error chunk is read back; the first one
    // holds the cause. The logger's err serializer keeps the body sent to the provider out.
    if (!failed) log.warn({ err: cause, conversationId: conversation.id, model: spec }, 'answer failed');
    failed = true;
    return safeErrorMessage(cause);
  };
  let finished = false;
  const onFinish = async ({ responseMessage, outcome }: { responseMessage: UIMessage; outcome?: { status: string } }) => {
    if (finished) return;
    finished = true;
    clearTimeout(deadline);
    req.abortSignal?.removeEventListener('abort', stop);
    done.abort(ANSWER_ENDED);
    if (outcome?.status === 'failed') failed = true;
    const total = sumUsage(usage);
    req.onFinished?.({ model: spec, usage: total, outcome: answerOutcome(responseMessage.parts, failed, reported) });
    if (req.transcript) {
      req.transcript.keep(finishedAnswer(spec, responseMessage, failed, total, reported));
      await req.onSettled?.().catch((err: unknown) => log.error({ err }, 'could not release the conversation'));
      return;
    }
    let stored: MessageRow | undefined;
    try {
      // A database that is away as the answer ends (a failover, a restart, a cut connection) must not
      // lose it: the write is retried on fresh connections for a while.
      stored = await retryWhileUnavailable(() => storeAnswer(req, spec, responseMessage, failed, total, reported), {
        budgetMs: STORE_RETRY_MS,
        onRetry: (err, attempt) =>
          log.warn({ err: { message: (err as Error).message }, conversationId: conversation.id, attempt }, 'could not store the answer yet; retrying'),
      });
    } catch (err) {
      log.error({ err, conversationId: conversation.id }, 'could not store the assistant message');
    } finally {
      await req.onSettled?.(stored).catch((err: unknown) => log.error({ err }, 'could not release the conversation'));
    }
  };

  try {
    const model = deps.models.resolve(spec);
    const reads = req.reads ?? projectReads(deps);
    const ctx: ToolContext = {
      deps,
      project,
      conversationId: conversation.id,
      endUser: req.endUser,
      userTokens: req.userTokens,
      abortSignal: done.signal,
      requestId: req.requestId,
      log,
      reads,
    };
    const [tools, history, skills] = await Promise.all([
      buildTools(ctx, req.factories ?? toolFactories),
      req.transcript
        ? req.transcript.history.map((m) => ({ ...m, id: '', status: 'complete' as const }))
        : (req.history ?? listHistory(deps.store.db, conversation.id)),
      reads.skills(project.id),
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
      messages: trimHistory(
        history.filter((m) => m.status !== 'error' && m.id !== req.supersedes).map((m) => ({ role: m.role, content: m.content })),
      ),
      tools,
      providerOptions: { [MODEL_HINTS]: callHints(project, skills) },
      stopWhen: stepCountIs(MAX_STEPS),
      maxRetries: 1,
      abortSignal: done.signal,
      timeout: { chunkMs: config.ANSWERDESK_MODEL_IDLE_TIMEOUT_MS },
      // The builtin model cites the sources it quotes itself; a real model gets every source found.
      experimental_transform: answerTransform({ citeSearchResults: spec !== 'builtin', signal: done.signal }),
      // Spans for the model and tool calls, under the request's: timings, models, token counts; the
      // prompt, the messages, tool arguments and results stay out (they hold what users wrote).
      experimental_telemetry: deps.tracing
        ? { isEnabled: true, tracer: deps.tracing.tracer, recordInputs: false, recordOutputs: false, functionId: 'answer' }
        : undefined,
      onStepFinish(step) {
        usage.push(step.usage);
        reported = reportedOutcome(step.providerMetadata) ?? reported;
      },
      // Errors are reported (once) through toUIMessageStream's onError below.
      onError() {},
    });
    // The only reader of the model's stream: no consumeStream() (it would tee the stream and add a
    // second chain of stages per answer). The HTTP layer reads this stream to its end whatever the
    // client does, which runs the answer to its end.
    return result.toUIMessageStream({
      sendSources: true,
      generateMessageId() {
        return req.assistantMessageId;
      },
      messageMetadata({ part }) {
        return part.type === 'start' ? { conversationId: conversation.id } : undefined;
      },
      onError,
      onFinish,
    });
  } catch (error) {
    // Setting up failed (model configuration, database): the AI SDK's own stream carries the error.
    return createUIMessageStream<UIMessage>({
      onError,
      generateId() {
        return req.assistantMessageId;
      },
      execute() {
        throw error;
      },
      onFinish,
    });
  }
}

/**
 * Our one stage on streamText's own stream (its `experimental_transform`), so nothing of ours sits
 * after toUIMessageStream:
 * - at the end of a real model's answer, one source part per source it used: the passages it cited
 *   as [n] (n as the knowledge tool numbered them) or whose words it quoted; a search result it did
 *   not use is not a source, so a decline cites nothing. The builtin model cites its sources itself;
 * - streamText reports its own timeouts as an `abort` part; for the client an answer that timed out
 *   failed, so it becomes an `error` part, which toUIMessageStream turns into an `error` chunk with
 *   a safe message. The only other abort is the node stopping the answer at shutdown, which says
 *   so instead; a client that leaves does not stop an answer;
 * - a model stream that fails (the connection drops mid-answer) becomes an `error` part too, so the
 *   UI stream still ends normally: `error` chunk, `[DONE]`, answer stored as failed;
 * - U+0000 is dropped from the model's text, as it is from what is stored.
 *
 * It is a writable/readable pair rather than a TransformStream because a TransformStream cannot
 * emit anything once its input failed. Backpressure is kept: a write waits while the readable side
 * is full.
 */
const answerTransform = ({ citeSearchResults, signal }: { citeSearchResults: boolean; signal: AbortSignal }): StreamTextTransform<ToolSet> => () => {
  type Part = TextStreamPart<ToolSet>;
  const found: NumberedHit[] = [];
  let answerText = '';
  let out!: ReadableStreamDefaultController<Part>;
  let input!: WritableStreamDefaultController;
  let ended = false;
  let resume: (() => void) | undefined;
  const wake = () => {
    const r = resume;
    resume = undefined;
    r?.();
  };
  const end = (last?: Part) => {
    if (ended) return;
    ended = true;
    if (last) out.enqueue(last);
    out.close();
  };
  const readable = new ReadableStream<Part>({
    start(controller) {
      out = controller;
    },
    pull: wake,
    cancel(reason) {
      ended = true;
      input.error(reason);
      wake();
    },
  });
  const writable = new WritableStream<Part>({
    start(controller) {
      input = controller;
    },
    write(part): Promise<void> | undefined {
      if (ended) return;
      if (part.type === 'abort') {
        const stopped = signal.reason instanceof AnswerInterruptedError;
        end({ type: 'error', error: stopped ? signal.reason : new AnswerTimeoutError(part.reason) });
        return;
      }
      // U+0000 cannot be stored on PostgreSQL: the client reads the text the history will hold. Only
      // U+0000: half an emoji at a delta's end is whole with the next delta (the stored answer is
      // made storable as a whole).
      if ((part.type === 'text-delta' || part.type === 'reasoning-delta') && part.text.includes('\u0000')) part = { ...part, text: withoutNul(part.text) };
      if (citeSearchResults && part.type === 'text-delta') answerText += part.text;
      if (citeSearchResults && part.type === 'tool-result' && part.toolName === KNOWLEDGE_TOOL && !part.preliminary) found.push(...numberedHits(part.output));
      // The sources of a real model's answer are those it used, known once its text is complete.
      if (citeSearchResults && part.type === 'finish') {
        for (const s of usedSources(answerText, found)) {
          out.enqueue(
            s.type === 'url' && s.url
              ? { type: 'source', sourceType: 'url', id: s.sourceId, url: s.url, title: s.title }
              : { type: 'source', sourceType: 'document', id: s.sourceId, mediaType: 'text/plain', title: s.title },
          );
        }
      }
      out.enqueue(part);
      // Waits only while the readable side is full: most writes return at once, without a promise of their own.
      if ((out.desiredSize ?? 1) <= 0 && !ended) return new Promise<void>((r) => (resume = r));
    },
    close() {
      end();
    },
    abort(reason) {
      end({ type: 'error', error: reason });
    },
  });
  return { readable, writable } as unknown as TransformStream<Part, Part>;
};

class AnswerTimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(reason?: string) {
    super(reason ?? 'The answer timed out');
  }
}

function sumUsage(steps: LanguageModelUsage[]): { inputTokens: number; outputTokens: number; totalTokens: number } | null {
  if (steps.length === 0) return null;
  const input = steps.reduce((n, u) => n + (u.inputTokens ?? 0), 0);
  const output = steps.reduce((n, u) => n + (u.outputTokens ?? 0), 0);
  return { inputTokens: input, outputTokens: output, totalTokens: input + output };
}

/** An outcome a model put in AnswerDesk's namespace of its provider metadata (the builtin model does). */
function reportedOutcome(metadata: Record<string, Record<string, unknown>> | undefined): MessageOutcome | null {
  const outcome = metadata?.[MODEL_HINTS]?.outcome;
  return MESSAGE_OUTCOMES.includes(outcome as MessageOutcome) ? (outcome as MessageOutcome) : null;
}

/**
 * What an answer did, from what it stored: `error` when it failed; the outcome the model reported,
 * when it did; `action` when an action it called answered (whatever the status: the answer comes
 * from it; handing over to a person is no action); `declined` when it searched the knowledge and
 * cites nothing (the sources of an answer are only those it used, so an answer that used none did
 * not answer from the help content); `answered` otherwise (small talk, a follow-up from the
 * conversation, the reply that a person will take over).
 */
export function answerOutcome(parts: UIMessage['parts'], failed: boolean, reported: MessageOutcome | null): MessageOutcome {
  if (failed) return 'error';
  if (reported) return reported;
  const tools = parts.flatMap((p) => (p.type.startsWith('tool-') && 'state' in p ? [{ name: p.type.slice(5), state: p.state }] : []));
  if (tools.some((t) => t.name !== KNOWLEDGE_TOOL && t.name !== HANDOFF_TOOL && t.state === 'output-available')) return 'action';
  const cites = parts.some((p) => p.type === 'source-url' || p.type === 'source-document');
  if (!cites && tools.some((t) => t.name === KNOWLEDGE_TOOL)) return 'declined';
  return 'answered';
}

/** What the answer produced, from its UI message: text, parts (tool calls, sources), cited sources, outcome. */
function finishedAnswer(
  model: string,
  message: UIMessage,
  failed: boolean,
  usage: ReturnType<typeof sumUsage>,
  reported: MessageOutcome | null,
): FinishedAnswer {
  // Whatever the model or a tool produced, U+0000 included, must be storable on PostgreSQL.
  const parts = storableDeep(message.parts.filter((p) => p.type !== 'step-start'));
  const content = parts
    .flatMap((p) => (p.type === 'text' && p.text.trim() ? [p.text.trim()] : []))
    .join('\n\n');
  const sources = new Map<string, CitedSource>();
  for (const p of parts) {
    if (p.type === 'source-url') sources.set(p.sourceId, { sourceId: p.sourceId, type: 'url', url: p.url, title: p.title ?? p.url });
    if (p.type === 'source-document') sources.set(p.sourceId, { sourceId: p.sourceId, type: 'document', title: p.title });
  }
  return { content, parts, sources: [...sources.values()], outcome: answerOutcome(parts, failed, reported), failed, model, usage };
}

/**
 * Stores what the answer produced: its text, its UI parts (tool calls, sources), model, usage,
 * status, outcome. Returns the stored row, or undefined when an earlier attempt had stored it.
 */
async function storeAnswer(
  req: AnswerRequest,
  model: string,
  message: UIMessage,
  failed: boolean,
  usage: ReturnType<typeof sumUsage>,
  reported: MessageOutcome | null,
): Promise<MessageRow | undefined> {
  const answer = finishedAnswer(model, message, failed, usage, reported);
  const db = req.deps.store.db;
  try {
    return await appendMessage(db, req.conversation, {
      id: req.assistantMessageId,
      role: 'assistant',
      content: answer.content,
      parts: answer.parts,
      sources: answer.sources.length > 0 ? answer.sources : null,
      status: failed ? 'error' : 'complete',
      outcome: answer.outcome,
      model,
      usage,
      supersedes: req.supersedes,
    });
  } catch (err) {
    // A retry after a commit whose acknowledgement was lost with the connection: already stored.
    if (!isUniqueViolation(err)) throw err;
    if (!(await messageExists(db, req.assistantMessageId))) throw err;
    return undefined;
  }
}
