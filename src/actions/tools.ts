import { jsonSchema, tool, type JSONSchema7, type ToolSet } from 'ai';
import { MODEL_HINTS, type ToolHints } from '../lib/model-hints.js';
import type { ActionDefinition } from './definition.js';
import { executeAction, type ActionCallResult, type ExecuteOptions } from './execute.js';
import { TRUNCATION_NOTE } from './response.js';

/** At most this many example phrases go into a tool description (they travel with every model call). */
const MAX_EXAMPLES_IN_DESCRIPTION = 10;

/** What the model receives from a call that reached the endpoint. */
export interface ActionToolOutput {
  /** HTTP status of the endpoint's answer. */
  status: number;
  /** The status is below 400. */
  ok: boolean;
  /** The response: parsed JSON when it fits, else (trimmed) text; secrets masked. */
  body: unknown;
  /** Present when the endpoint sent more than the model is given. */
  truncated?: true;
}

/** The tool description: the action's own text, then the phrases that should trigger it. */
export function toolDescription(action: Pick<ActionDefinition, 'description' | 'examples'>): string {
  const examples = action.examples.slice(0, MAX_EXAMPLES_IN_DESCRIPTION);
  if (examples.length === 0) return action.description;
  return `${action.description}\n\nExamples of requests: ${examples.map((e) => `"${e}"`).join('; ')}`;
}

/** The same two parts as data, for the builtin model (see lib/model-hints.ts). */
export function toolHints(action: Pick<ActionDefinition, 'description' | 'examples'>): ToolHints {
  return { description: action.description, examples: action.examples.slice(0, MAX_EXAMPLES_IN_DESCRIPTION) };
}

/**
 * Turns a call result into the tool's output, or throws so the AI SDK reports a tool error to the
 * model (invalid arguments, refused address, timeout, network failure): the model can correct its
 * arguments or tell the user the action is unavailable. Error texts hold no URL or secret.
 */
export function toolOutput(result: ActionCallResult): ActionToolOutput {
  if (result.error || !result.response) {
    const details = result.error?.details?.map((d) => `${d.path || 'arguments'} ${d.message}`).join('; ');
    throw new Error(details ? `${result.error!.message}: ${details}` : (result.error?.message ?? 'The action failed'));
  }
  const { status, forModel, truncated } = result.response;
  const cut = forModel.endsWith(TRUNCATION_NOTE);
  let body: unknown = forModel;
  if (!cut) {
    try {
      body = JSON.parse(forModel);
    } catch {
      // Text stays text.
    }
  }
  return { status, ok: result.ok, body, ...(truncated || cut ? { truncated: true as const } : {}) };
}

/** What every call made during one answer carries: its conversation, identity, signal and log. */
export type AnswerCallOptions = Omit<ExecuteOptions, 'source'>;

/** One AI SDK tool for an action; each call carries this answer's user tokens and nothing else. */
function actionTool(action: ActionDefinition, call: AnswerCallOptions) {
  return tool({
    description: toolDescription(action),
    inputSchema: jsonSchema<Record<string, unknown>>(action.parameters as JSONSchema7),
    providerOptions: { [MODEL_HINTS]: toolHints(action) },
    execute: async (input) => toolOutput(await executeAction(action, input, { ...call, source: 'agent' })),
  });
}

/**
 * The actions as agent tools: one tool per action, named by the action, described by its
 * description and examples, with its JSON Schema as input schema. Arguments are checked with ajv
 * inside the call, so a bad call is a tool error that never reaches the endpoint.
 */
export function actionTools(actions: readonly ActionDefinition[], call: AnswerCallOptions): ToolSet {
  const tools: ToolSet = {};
  for (const action of actions) tools[action.name] = actionTool(action, call);
  return tools;
}
