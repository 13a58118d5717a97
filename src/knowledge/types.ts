/** A passage found in a project's knowledge, as the `search_knowledge` tool and the search API return it. */
export interface KnowledgeHit {
  chunkId: string;
  sourceId: string;
  title: string;
  url: string | null;
  headingPath: string[];
  text: string;
  score: number;
}

export const SOURCE_TYPES = ['text', 'markdown', 'html', 'pdf', 'url', 'sitemap', 'faq'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** One structural element of a page, in reading order. */
export type Block =
  /**
   * `anchor` is the heading's fragment in the page's URL: its own (an HTML `id`, a PDF page) or,
   * once the page is read, the one GitHub would give it (anchors.ts).
   */
  | { kind: 'heading'; level: number; text: string; anchor?: string }
  | { kind: 'text' | 'list' | 'table' | 'code'; text: string }
  /**
   * A thematic break (`<hr>`, Markdown's `---`): a change of topic inside a section, such as the end
   * of one entry of a reference page. A chunk that spans one shows it as a `---` line.
   */
  | { kind: 'break'; text: typeof THEMATIC_BREAK };

/** How a thematic break reads in a chunk's text: Markdown's own. */
export const THEMATIC_BREAK = '---';

/**
 * How a definition's description starts a line of a chunk's text: `: ` (the definition-list form of
 * PHP Markdown Extra and Pandoc, which extract.ts writes for `<dl>` entries).
 */
export const DEFINITION = /^\s*:\s+/;

/**
 * The definition-list terms of a chunk's text: each line directly above a description line (blank
 * lines between them aside) that is no description itself. The entry runs from its term to the next.
 */
export function definitionTerms(text: string): string[] {
  const lines = text.split('\n').filter((line) => line.trim());
  return lines.filter((_, i) => isDefinitionTerm(lines, i)).map((line) => line.trim());
}

/** Whether `lines[i]` (a passage's lines without its blank ones) is a definition-list term. */
export const isDefinitionTerm = (lines: readonly string[], i: number) =>
  i + 1 < lines.length && DEFINITION.test(lines[i + 1]!) && !DEFINITION.test(lines[i]!);

/** A document reduced to its structure: what chunking works from. */
export interface Page {
  title: string;
  /** Where the page lives (URL sources), or null for uploaded and pasted content. */
  url: string | null;
  blocks: Block[];
}

/** A chunk before it is stored. */
export interface ChunkDraft {
  title: string;
  headingPath: string[];
  /** The page URL with the nearest heading's anchor, or `#anchor` alone for documents without a URL. */
  url: string | null;
  text: string;
}

/** Crawl limits of URL, crawl and sitemap sources. */
export interface CrawlOptions {
  /** Follow links from the start URL (type url) up to this depth; 0 fetches the page alone. */
  maxDepth: number;
  maxPages: number;
}
