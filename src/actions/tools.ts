import { jsonSchema, tool, type JSONSchema7, type ToolSet } from 'ai';
import { loadEnabledActions } from '../api/actions/service.js';
import type { ToolContext, ToolFactory } from '../agent/tools.js';
import type { ActionDefinition } from './definition.js';
import { executeAction, type ActionCallResult } from './execute.js';
import { TRUNCATION_NOTE } from './response.js';
import { secretBox } from './secret-box.js';

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

/** One AI SDK tool for an action; each call carries this answer's user tokens and nothing else. */
function actionTool(action: ActionDefinition, ctx: ToolContext) {
  return tool({
    description: toolDescription(action),
    inputSchema: jsonSchema<Record<string, unknown>>(action.parameters as JSONSchema7),
    execute: async (input) => {
      const result = await executeAction(action, input, {
        config: ctx.deps.config,
        db: ctx.deps.store.db,
        source: 'agent',
        conversationId: ctx.conversationId,
        identity: { endUser: ctx.endUser, userTokens: ctx.userTokens },
        signal: ctx.abortSignal,
        log: ctx.log,
      });
      return toolOutput(result);
    },
  });
}

/**
 * The actions part of the agent's tools: one tool per enabled action of the project, named by the
 * action, described by its description and examples, with its JSON Schema as input schema.
 * Arguments are checked with ajv inside the call, so a bad call is a tool error that never reaches
 * the endpoint.
 */
export const actionTools: ToolFactory = async (ctx) => {
  const actions = await loadEnabledActions(ctx.deps.store.db, secretBox(ctx.deps.config), ctx.project.id, (actionId, err) =>
    ctx.log.error({ actionId, err: (err as Error).message }, 'action left out: its secret headers cannot be decrypted'),
  );
  const tools: ToolSet = {};
  for (const action of actions) tools[action.name] = actionTool(action, ctx);
  return tools;
};
