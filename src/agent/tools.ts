import type { ToolSet } from 'ai';
import type { FastifyBaseLogger } from 'fastify';
import { actionTools } from '../actions/tools.js';
import type { Project } from '../api/projects/schema.js';
import type { AppDeps } from '../http/context.js';
import { knowledgeToolFactory } from '../knowledge/tool.js';

/** Everything a tool may need while one answer is being produced. */
export interface ToolContext {
  deps: AppDeps;
  project: Project;
  conversationId: string;
  /** The conversation's end user; `verified` only when this request proved the identity. */
  endUser: { id: string; externalId: string; verified: boolean } | null;
  /**
   * Headers the client sent for action endpoints, for this request only. Never stored, logged or put
   * into the prompt.
   */
  userTokens: Record<string, string>;
  /** Aborted when the answer is cancelled or times out; pass it to outbound calls. */
  abortSignal: AbortSignal;
  log: FastifyBaseLogger;
}

/** Builds the tools one part of the product (knowledge, actions) offers for one answer. */
export type ToolFactory = (ctx: ToolContext) => Promise<ToolSet>;

/**
 * Every tool factory. Each part adds one line here; the agent offers the union of their tools to the
 * model, so a real model and the builtin one see exactly the same tools.
 */
export const toolFactories: ToolFactory[] = [knowledgeToolFactory, actionTools];

/**
 * Runs every factory and merges their tools. A factory that fails is logged and left out, so one
 * broken part (e.g. an unreadable action) does not take the whole answer down.
 */
export async function buildTools(ctx: ToolContext, factories: readonly ToolFactory[] = toolFactories): Promise<ToolSet> {
  const sets = await Promise.all(
    factories.map((factory) =>
      factory(ctx).catch((err: unknown) => {
        ctx.log.error({ err }, 'tool factory failed; its tools are not offered');
        return {} as ToolSet;
      }),
    ),
  );
  const tools: ToolSet = {};
  for (const set of sets) {
    for (const [name, tool] of Object.entries(set)) {
      if (name in tools) ctx.log.warn({ tool: name }, 'two tools share a name; the first one is kept');
      else tools[name] = tool;
    }
  }
  return tools;
}
