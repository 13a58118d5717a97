import { tool, zodSchema, type ToolSet } from 'ai';
import { z } from 'zod';
import type { KnowledgeSearch } from './search/index.js';
import type { KnowledgeHit } from './types.js';

/** Name of the knowledge tool, as the model (and the builtin model) sees it. */
export const KNOWLEDGE_TOOL = 'search_knowledge';

/**
 * Passages handed to the model per search: enough to answer, few enough to keep the prompt small.
 * The first three are of three pages (search's `diversify`); the rest are the best of what is left,
 * often the first page's further passages, where its answer may be.
 */
const RESULTS_PER_SEARCH = 7;

/**
 * The coverage (see AssessedHit: the share of a question's distinctive terms, weighted by rarity in
 * the project, a passage holds, with a missing everyday word the content uses weighing a tenth) a
 * passage must have to be handed to the model as relevant, when the question is short (see
 * requiredMatch). Below it, a passage lacks a name or a word the project never uses ("Do you ship
 * to Mars?" against the shipping countries page), or most of the question's other words.
 */
export const MIN_MATCH = 0.94;

/**
 * How many weighted terms a question can have before some of them are likely to tell its story
 * rather than name what it asks (see requiredMatch).
 */
export const ASKING_TERMS = 7;
/** The least share of a question's terms a passage must hold, however long the question. */
export const LONG_MIN_MATCH = 0.6;

/**
 * The coverage a passage needs to be handed over, for a question of `terms` weighted terms. A short
 * question's words are what it asks, and a passage must hold MIN_MATCH of their weight. A long
 * message also tells its story ("On one office PC Python takes ages to come up, while identical
 * setups right next to it launch instantly…"), in words the passage that answers has no reason to
 * repeat: past ASKING_TERMS terms, a passage must hold the share MIN_MATCH of ASKING_TERMS terms
 * would be, and never less than LONG_MIN_MATCH. Measured in docs/knowledge.md ("Long questions").
 */
export function requiredMatch(terms: number): number {
  return terms <= ASKING_TERMS ? MIN_MATCH : Math.max(LONG_MIN_MATCH, (MIN_MATCH * ASKING_TERMS) / terms);
}

/** What the tool says when nothing relevant was found: declining is then the expected answer. */
export const NOTHING_FOUND =
  'Nothing in the help content answers this question. Tell the customer plainly that you do not know, cite nothing, ' +
  'and offer what you can do instead (rephrase the question, what your tools and workflows cover, or contacting the team). ' +
  'Do not answer from general knowledge.';

/** A passage as the model receives it: `n` is the number to cite it by, `match` its coverage of the question. */
export type ToolHit = KnowledgeHit & { n: number; match: number };

export interface KnowledgeToolOutput {
  /** Whether any passage covers the question well enough to answer from. */
  found: boolean;
  /** The relevant passages, best first; empty when nothing relevant was found. */
  results: ToolHit[];
  /** The question's terms (with the alternatives searched) and what each weighs: rarer terms decide more. */
  terms: Array<{ forms: string[]; weight: number }>;
  /** Present when nothing relevant was found: what the model should do. */
  note?: string;
}

/**
 * The tool's input, made once: the AI SDK converts a schema to JSON Schema for every model call, and
 * a zod schema per answer would be converted again each time (a fifth of a millisecond per call, and
 * its garbage); a schema object keeps its conversion.
 */
const searchInput = zodSchema(
  z.object({
    query: z.string().min(1).max(500).describe('What to look for: the question or its key words.'),
  }),
);

/**
 * The `search_knowledge` tool: searches the project's ready knowledge sources and returns the
 * passages that cover the question, with their source, title, heading path and URL and a number
 * `n` to cite them by (unique within one answer, across searches), or says that nothing relevant
 * was found. One instance per answer.
 */
export function knowledgeTools(search: KnowledgeSearch, projectId: string): ToolSet {
  let cited = 0;
  return {
    [KNOWLEDGE_TOOL]: tool({
      description:
        "Search this company's help content (documentation, FAQ, web pages) for passages that answer the user's question. " +
        'Use it before answering any question about the product or company, and answer only from what it returns, citing each passage you use as [n]. ' +
        'When it reports that nothing relevant was found, say that you do not know.',
      inputSchema: searchInput,
      execute: async ({ query }): Promise<KnowledgeToolOutput> => {
        const { hits, terms } = await search.assess(projectId, query, RESULTS_PER_SEARCH);
        const floor = requiredMatch(terms.filter((t) => t.weight > 0).length);
        // Passages that cover the question, grouped by source in the order the search ranked the
        // sources: a page whose first passage falls short but whose second answers still comes
        // before the pages ranked below it.
        const sourceRank = new Map<string, number>();
        for (const h of hits) if (!sourceRank.has(h.sourceId)) sourceRank.set(h.sourceId, sourceRank.size);
        const results = hits
          .filter((h) => h.coverage >= floor)
          .sort((a, b) => sourceRank.get(a.sourceId)! - sourceRank.get(b.sourceId)!)
          .map(({ coverage, ...hit }) => ({ ...hit, n: ++cited, match: coverage }));
        return results.length > 0 ? { found: true, results, terms } : { found: false, results: [], terms, note: NOTHING_FOUND };
      },
    }),
  };
}
