import type { Tracer } from '@opentelemetry/api';
import type { ToolSet } from 'ai';
import type { FastifyBaseLogger } from 'fastify';
import { actionTools } from '../actions/tools.js';
import type { KnowledgeDeps } from '../knowledge/runtime.js';
import { knowledgeTools } from '../knowledge/tool.js';
import type { LocalEndpoints } from '../lib/local-endpoints.js';
import { handoffTools } from './handoff-tool.js';
import { projectReads, type ProjectReads } from './project-reads.js';
import type { Project } from '../projects/project.js';
import type { ModelRegistry } from './models.js';

/** What the agent needs of the app's deps. */
export interface AgentDeps extends KnowledgeDeps {
  models: ModelRegistry;
  /** When set, the AI SDK records its model and tool calls as spans (never their inputs or outputs). */
  tracing?: { tracer: Tracer } | null;
  /** This server's own endpoints that actions may reach on a loopback address (the demo's order look-up). */
  localEndpoints?: LocalEndpoints;
}

/** Everything a tool may need while one answer is being produced. */
export interface ToolContext {
  deps: AgentDeps;
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
  /** The request's id, passed to action endpoints as `X-Request-Id`. */
  requestId?: string;
  log: FastifyBaseLogger;
  /** Where the project's enabled actions are read (the HTTP layer's are cached per node); default the database. */
  reads?: ProjectReads;
}

/** Builds the tools one part of the product (knowledge, actions) offers for one answer. */
export type ToolFactory = (ctx: ToolContext) => Promise<ToolSet>;

/** The knowledge part: `search_knowledge` over the project's ready sources. */
export const knowledgePart: ToolFactory = async (ctx) => knowledgeTools(ctx.deps.knowledge.search, ctx.project.id);

/**
 * The actions part: a tool per enabled action of the project. An action whose secret headers cannot
 * be decrypted (the key changed) is logged and left out; the others stay available.
 */
const actionsPart: ToolFactory = async (ctx) => {
  const actions = await (ctx.reads ?? projectReads(ctx.deps)).actions(ctx.project.id, ctx.log);
  return actionTools(actions, {
    config: ctx.deps.config,
    db: ctx.deps.store.db,
    conversationId: ctx.conversationId,
    identity: { endUser: ctx.endUser, userTokens: ctx.userTokens },
    signal: ctx.abortSignal,
    requestId: ctx.requestId,
    log: ctx.log,
    localEndpoints: ctx.deps.localEndpoints,
  });
};

/** The handoff part: `request_handoff`, when the project lets conversations go to a person. */
const handoffPart: ToolFactory = async (ctx) => handoffTools({ db: ctx.deps.store.db, project: ctx.project, conversationId: ctx.conversationId });

/**
 * Every tool factory. Each part adds one line here; the agent offers the union of their tools to the
 * model, so a real model and the builtin one see exactly the same tools.
 */
export const toolFactories: ToolFactory[] = [knowledgePart, actionsPart, handoffPart];

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
