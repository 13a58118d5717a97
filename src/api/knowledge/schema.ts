import { z } from 'zod';
import { SOURCE_TYPES } from '../../knowledge/types.js';
import { wholeNumberParam } from '../../lib/query-number.js';

/** The longest title a source keeps, however it was given (a file's name included). */
export const MAX_TITLE_CHARS = 300;

export { adminError, adminErrors, projectParams } from '../projects/admin-schema.js';

const faqItem = z
  .object({
    question: z.string().trim().min(1).max(1000).describe('The question as a customer would ask it.'),
    answer: z.string().trim().min(1).max(20_000).describe('The answer, plain text.'),
  })
  .strict();

const httpUrl = z
  .string()
  .url()
  .max(2048)
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

/**
 * The fields each type reads besides `type` and `title`, the one it requires first; any other is
 * refused rather than ignored.
 */
const FIELDS_OF_TYPE: Record<'text' | 'markdown' | 'html' | 'url' | 'sitemap' | 'faq', readonly string[]> = {
  text: ['content'],
  markdown: ['content'],
  html: ['content'],
  url: ['url', 'maxDepth', 'maxPages'],
  sitemap: ['url', 'maxPages'],
  faq: ['items'],
};

/** POST /projects/{id}/knowledge (JSON). Which fields are required, and allowed, depends on `type`. */
export const createSourceBody = z
  .object({
    type: z
      .enum(['text', 'markdown', 'html', 'url', 'sitemap', 'faq'])
      .describe('text, markdown and html take `content`; url (a page, or a start page to crawl) and sitemap take `url`; faq takes `items`. PDF files are uploaded as multipart.'),
    title: z.string().trim().min(1).max(MAX_TITLE_CHARS).optional().describe('Shown with citations; defaults to the first heading or page title.'),
    content: z
      .string()
      .min(1)
      .max(5_000_000)
      .refine((text) => text.trim() !== '', 'must not be blank')
      .optional()
      .describe('The text, Markdown or HTML itself; not blank.'),
    url: httpUrl.optional().describe('Page, start page or sitemap URL.'),
    items: z.array(faqItem).min(1).max(2000).optional().describe('FAQ pairs.'),
    maxDepth: z.number().int().min(0).max(5).optional().describe('url only: follow same-site links this many levels deep (default 0: the page alone).'),
    maxPages: z.number().int().min(1).max(5000).optional().describe('url and sitemap: at most this many pages (default 50).'),
  })
  .strict()
  .superRefine((body, ctx) => {
    const fields = FIELDS_OF_TYPE[body.type];
    const required = fields[0] as 'content' | 'url' | 'items';
    if (body[required] === undefined) ctx.addIssue({ code: 'custom', path: [required], message: `Required for type "${body.type}"` });
    // A field of another type would be dropped without a word (a faq's stray `content`).
    for (const field of ['content', 'url', 'items', 'maxDepth', 'maxPages'] as const) {
      if (body[field] !== undefined && !fields.includes(field)) {
        ctx.addIssue({ code: 'custom', path: [field], message: `Not used by type "${body.type}"` });
      }
    }
  })
  .meta({
    id: 'CreateKnowledgeSourceRequest',
    description: 'A source given as JSON; which fields are required, and allowed, depends on `type`. Unknown fields are refused.',
  });

/** The multipart body of the file upload (documented; the handler reads the parts itself). */
export const uploadSourceBody = z
  .object({
    file: z.string().meta({ contentMediaType: 'application/octet-stream' }).describe('The file: .md, .txt, .html or .pdf, at most 20 MiB.'),
    title: z.string().max(MAX_TITLE_CHARS).optional().describe('Shown with citations; defaults to the first heading (Markdown) or the file name.'),
  })
  .meta({ id: 'UploadKnowledgeFileRequest', description: 'One file and an optional title.' });
export type CreateSourceBody = z.infer<typeof createSourceBody>;

export const sourceParams = z.object({
  projectId: z.string().min(1).max(64).describe('Project id (`proj_…`).'),
  sourceId: z.string().min(1).max(64).describe('Knowledge source id (`ks_…`).'),
});

export const knowledgeSource = z
  .object({
    id: z.string().describe('`ks_…`'),
    projectId: z.string(),
    type: z.enum(SOURCE_TYPES),
    title: z.string().nullable(),
    url: z.string().nullable().describe('The page, start page or sitemap of URL sources.'),
    status: z.enum(['pending', 'processing', 'ready', 'failed']).describe('pending: queued; processing: being read; ready: searchable; failed: see `error`.'),
    error: z.string().nullable().describe('Why ingestion failed, or which pages were skipped.'),
    progress: z
      .object({
        pagesDone: z.number().int(),
        pagesTotal: z.number().int().nullable().describe('Null while a link crawl does not know it yet.'),
        chunksDone: z.number().int(),
      })
      .describe('Progress of the current (or last) ingestion.'),
    chunkCount: z.number().int().describe('Searchable chunks (of the last complete ingestion).'),
    syncedAt: z.string().nullable().describe('When the searchable content was last completed.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'KnowledgeSource', description: 'A knowledge source and the progress of its ingestion.' });
export type KnowledgeSource = z.infer<typeof knowledgeSource>;

export const sourceWrapped = z.object({ source: knowledgeSource }).meta({ id: 'KnowledgeSourceResponse', description: 'A knowledge source.' });
export const sourceList = z
  .object({ sources: z.array(knowledgeSource).describe('Oldest first.') })
  .meta({ id: 'KnowledgeSourceList', description: "A project's knowledge sources." });

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(1000).describe('The question or keywords.'),
  limit: wholeNumberParam(1, 50, 10).describe('Results to return (1..50, default 10).'),
});

export const knowledgeHit = z
  .object({
    chunkId: z.string(),
    sourceId: z.string(),
    title: z.string(),
    url: z.string().nullable().describe('Page URL with the anchor of the nearest heading; null for uploaded and pasted documents.'),
    headingPath: z.array(z.string()).describe('Headings above the chunk, outermost first.'),
    text: z.string(),
    score: z.number().describe('Higher is better; comparable within one response only.'),
    source: z.object({ id: z.string(), type: z.enum(SOURCE_TYPES), title: z.string().nullable() }),
  })
  .meta({ id: 'KnowledgeHit', description: 'A passage found by a knowledge search.' });

export const searchResults = z
  .object({
    results: z.array(knowledgeHit).describe('Best first; only ready sources of this project.'),
  })
  .meta({ id: 'KnowledgeSearchResults', description: 'Passages found, best first.' });
