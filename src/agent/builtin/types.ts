import type { LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import type { CitedSource } from '../sources.js';

export type JsonSchema = LanguageModelV3FunctionTool['inputSchema'];

/** A tool the agent offered to the model for this call (name, description, JSON Schema of its input). */
export interface OfferedTool {
  name: string;
  /** What the tool does; for an action, its description without the example requests. */
  description: string;
  /** Requests that should trigger the tool (actions only). */
  examples: string[];
  inputSchema: JsonSchema;
}

/** A tool call the builtin model made earlier in this answer, with what came back. */
export interface ToolOutcome {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The tool's JSON output, or its text output, or the error text when `isError`. */
  output: unknown;
  isError: boolean;
}

/**
 * What the builtin model knows when it decides its next step: a plain view of the prompt the AI SDK
 * handed it. Modules decide from this alone, which keeps them deterministic and testable.
 */
export interface BuiltinTurn {
  /** Text of the user's latest message. */
  question: string;
  /** Every user message's text, oldest first; the last one is `question`. */
  userTexts: string[];
  /** Text of the assistant message before `question`, if any (e.g. a question we asked). */
  previousAnswer: string | null;
  /** Name the system prompt gives the assistant's company, if any (for greetings). */
  projectName: string | null;
  /** Names of the project's skills the system prompt lists ("Track an order"), if any. */
  skills?: string[];
  tools: OfferedTool[];
  /** Tool calls of this answer so far (calls made after `question`), oldest first. */
  outcomes: ToolOutcome[];
}

/**
 * The builtin model's next step: call one tool, or answer in text (which ends the answer), citing
 * `sources` as [1], [2]… in that order. `declined`: the text says it cannot answer (stored as the
 * message's outcome).
 */
export type BuiltinDecision =
  | { kind: 'call'; toolName: string; input: Record<string, unknown> }
  | { kind: 'answer'; text: string; sources?: CitedSource[]; declined?: boolean };

/**
 * One decision module (small talk, knowledge, actions): returns its decision, or null to let the
 * next module decide.
 */
export type BuiltinSkill = (turn: BuiltinTurn) => BuiltinDecision | null;
