import { storable, storableDeep } from '../lib/nul.js';
import { chunkPage } from './chunk.js';
import { bodyToPage, faqToPage, htmlToPage, pdfToPage } from './extract.js';
import { markdownToPage } from './markdown.js';
import { textToPage } from './plain-text.js';
import type { ChunkDraft, Page } from './types.js';

/** A document to read: a stored source's payload, or a page fetched by a crawl. */
export type DocumentInput =
  | {
      kind: 'stored';
      type: 'text' | 'markdown' | 'html' | 'pdf' | 'faq';
      /** Text, Markdown or HTML; base64 for PDF; JSON `[{question, answer}]` for FAQ. */
      payload: string;
      title: string;
    }
  | {
      kind: 'fetched';
      body: Uint8Array;
      contentType: string;
      /** The URL the body came from (after redirects). */
      url: string;
      /** Also return the page's links (an HTML page whose links the crawl follows). */
      withLinks: boolean;
    };

/** A document read and cut into chunks. */
export interface ParsedDocument {
  title: string;
  chunks: ChunkDraft[];
  /** Absolute links of the page, when asked for. */
  links: string[];
}

/** How much there is to read: what decides whether plain text and FAQs are read off the main thread. */
export function documentSize(input: DocumentInput): number {
  return input.kind === 'stored' ? input.payload.length : input.body.byteLength;
}

async function storedPage(input: Extract<DocumentInput, { kind: 'stored' }>): Promise<Page> {
  const { payload, title } = input;
  switch (input.type) {
    case 'text':
      return textToPage(payload, title || 'Text');
    case 'markdown':
      return markdownToPage(payload, title);
    case 'html':
      return htmlToPage(payload, null, title);
    case 'pdf':
      return pdfToPage(new Uint8Array(Buffer.from(payload, 'base64')), title);
    case 'faq':
      return faqToPage(JSON.parse(payload) as Array<{ question: string; answer: string }>, title);
  }
}

/**
 * Reads a document into its structure and cuts it into chunks (the CPU-heavy part of ingestion:
 * Markdown lexing, HTML parsing with Readability, PDF text extraction, chunking). U+0000 is dropped
 * from everything it returns: documents may hold it and PostgreSQL cannot store it. Runs in the
 * parser's worker thread, or on the main thread for small plain text and FAQs (see parser.ts).
 */
export async function parseDocument(input: DocumentInput): Promise<ParsedDocument> {
  const { page, links } =
    input.kind === 'fetched'
      ? await bodyToPage(Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength), input.contentType, input.url, '', input.withLinks)
      : { page: await storedPage(input), links: [] };
  return { title: storable(page.title), chunks: storableDeep(chunkPage(page)), links };
}
