import { tool, type ToolSet } from 'ai';
import { z } from 'zod';
import type { KnowledgeSearch } from './search/index.js';
import type { KnowledgeHit } from './types.js';

/** Name of the knowledge tool, as the model (and the builtin model) sees it. */
export const KNOWLEDGE_TOOL = 'search_knowledge';

/** Passages handed to the model per search: enough to answer, few enough to keep the prompt small. */
const RESULTS_PER_SEARCH = 5;

/**
 * The `search_knowledge` tool: searches the project's ready knowledge sources and returns the best
 * passages with their source, title, heading path and URL, so the answer can cite them.
 */
export function knowledgeTools(search: KnowledgeSearch, projectId: string): ToolSet {
  return {
    [KNOWLEDGE_TOOL]: tool({
      description:
        "Search this company's help content (documentation, FAQ, web pages) for passages that answer the user's question. " +
        'Use it before answering any question about the product or company, and answer only from what it returns, citing the sources.',
      inputSchema: z.object({
        query: z.string().min(1).max(500).describe('What to look for: the question or its key words.'),
      }),
      execute: async ({ query }): Promise<{ results: KnowledgeHit[] }> => ({
        results: await search.search(projectId, query, RESULTS_PER_SEARCH),
      }),
    }),
  };
}
