import type { UIMessageChunk } from 'ai';
import type { AnswerSummary } from '../../agent/answer.js';
import { KNOWLEDGE_TOOL } from '../../knowledge/tool.js';
import type { Metrics, ToolCallStatus } from '../../lib/metrics.js';

/**
 * Reads an answer's UI message chunks as they pass to the client and records, once the answer has
 * ended, its time to the first text, its duration, its outcome and finish reason, its tokens, and
 * each tool call's status. It sits in the loop that already reads the stream, so it adds no stage
 * to it.
 */
export class AnswerMetrics {
  private firstText: number | null = null;
  private finishReason = 'none';
  private failed = false;
  private outcome: AnswerSummary['outcome'] | null = null;
  private readonly tools = new Map<string, string>();

  constructor(
    private readonly metrics: Metrics,
    private readonly started: number,
  ) {}

  observe(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'text-delta':
        this.firstText ??= performance.now();
        break;
      case 'tool-input-start':
      case 'tool-input-available':
        this.tools.set(chunk.toolCallId, chunk.toolName);
        break;
      case 'tool-input-error':
        this.tool(chunk.toolCallId, chunk.toolName, 'error');
        break;
      case 'tool-output-available':
        if (chunk.preliminary) break;
        // An action whose endpoint answered 4xx/5xx is a finished call with `ok: false`.
        this.tool(chunk.toolCallId, undefined, (chunk.output as { ok?: unknown } | null)?.ok === false ? 'http_error' : 'ok');
        break;
      case 'tool-output-error':
        this.tool(chunk.toolCallId, undefined, 'error');
        break;
      case 'error':
        this.failed = true;
        break;
      case 'finish':
        this.finishReason = chunk.finishReason ?? 'unknown';
        break;
    }
  }

  /** The answer's own account of itself (the agent calls this as the answer ends). */
  finished(projectId: string, summary: AnswerSummary): void {
    this.outcome = summary.outcome;
    if (summary.usage) this.metrics.modelTokens(projectId, summary.model, summary.usage.inputTokens, summary.usage.outputTokens);
  }

  /** The answer has ended (and been read to its end). */
  end(): void {
    const at = performance.now();
    this.metrics.answer({
      ttfbSeconds: this.firstText === null ? null : (this.firstText - this.started) / 1000,
      durationSeconds: (at - this.started) / 1000,
      finishReason: this.failed ? 'error' : this.finishReason,
      outcome: this.outcome ?? (this.failed ? 'error' : 'answered'),
    });
  }

  private tool(id: string, name: string | undefined, status: ToolCallStatus): void {
    const toolName = name ?? this.tools.get(id);
    this.tools.delete(id);
    this.metrics.toolCall(toolName === KNOWLEDGE_TOOL ? 'knowledge' : 'action', status);
  }
}
