import type { Kysely } from 'kysely';
import { reopenGapsAnsweredBy } from '../../conversations/gaps.js';
import type { KnowledgeDeps } from '../../knowledge/runtime.js';
import * as sources from '../../knowledge/sources.js';
import type { SourceType } from '../../knowledge/types.js';
import { BadRequest } from '../../lib/errors.js';
import { clipText } from '../../lib/nul.js';
import { decodeDocument, looksBinary } from '../../lib/text-encoding.js';
import { refusePrivateHost } from '../../net/address-policy.js';
import type { Database } from '../../store/schema.js';
import { MAX_TITLE_CHARS, type CreateSourceBody, type KnowledgeSource } from './schema.js';

type Db = Kysely<Database>;

export function toSource(row: sources.SourceRow): KnowledgeSource {
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    title: row.title,
    url: row.url,
    status: row.status,
    error: row.error,
    progress: { pagesDone: row.pages_done, pagesTotal: row.pages_total, chunksDone: row.chunks_done },
    chunkCount: row.chunk_count,
    syncedAt: row.synced_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The new source a JSON create body describes. */
export function fromBody(body: CreateSourceBody): sources.NewSource {
  return {
    type: body.type,
    title: body.title,
    url: body.url,
    payload: body.type === 'faq' ? JSON.stringify(body.items) : body.content,
    options: body.type === 'url' ? { maxDepth: body.maxDepth ?? 0, maxPages: body.maxPages } : { maxPages: body.maxPages },
  };
}

/** File name endings a file source may have, and the type each is read as. */
export const FILE_TYPES: Readonly<Record<string, SourceType>> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.html': 'html',
  '.htm': 'html',
  '.pdf': 'pdf',
};
const SUPPORTED_FILES = `${Object.keys(FILE_TYPES).join(', ')} files`;

/** First bytes of formats that are not text, so a misnamed one is refused rather than stored as noise. */
const NOT_TEXT: Array<[bytes: number[], what: string]> = [
  [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (as .docx, .xlsx, .pptx and .odt documents are)'],
  [[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 'an Office 97-2003 document'],
  [[0x7b, 0x5c, 0x72, 0x74, 0x66], 'an RTF document'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
];

/** The extension of a file name, lower case, with its dot ('' when it has none). */
function extensionOf(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

/**
 * A file as a new source, for the upload route and the CLI alike: its type from its name (a PDF
 * also from its first bytes, or `type` when the caller knows better), its title from its name
 * (Markdown titles itself from its first heading). A file AnswerDesk cannot read is refused with
 * 400 and a message saying what would work, never stored as a text full of binary noise.
 */
export function sourceFromFile(name: string, data: Buffer, options: { type?: SourceType; title?: string } = {}): sources.NewSource {
  if (data.length === 0) throw BadRequest('The file is empty');
  const ext = extensionOf(name);
  const isPdf = data.subarray(0, 5).toString('latin1') === '%PDF-';
  const type = options.type ?? (isPdf ? 'pdf' : FILE_TYPES[ext]);
  if (!type) {
    throw BadRequest(
      `Unsupported file type ${ext ? `"${ext}"` : '(no extension)'}: AnswerDesk reads ${SUPPORTED_FILES}; save other documents as PDF or HTML first`,
    );
  }
  if (type === 'pdf' && !isPdf) throw BadRequest('The file is not a PDF (it does not start with %PDF-)');
  const binary = type === 'pdf' ? undefined : NOT_TEXT.find(([bytes]) => bytes.every((b, i) => data[i] === b));
  // "not plain text" for a .txt file, where the type's own name would say "not text text".
  if (binary) throw BadRequest(`The file is ${binary[1]}, not ${type === 'text' ? 'plain' : type} text: save it as PDF or HTML first`);
  // Text in the encoding it was saved in (UTF-8, UTF-16 with its byte order mark, an HTML page's
  // declared charset, or windows-1252), never read as UTF-8 regardless.
  const text = type === 'pdf' ? undefined : decodeDocument(data, null, type === 'html');
  if (text !== undefined && looksBinary(text)) throw BadRequest('The file holds binary data, not text: save it as PDF, HTML, Markdown or plain text first');
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const fallback = clipText((ext ? base.slice(0, -ext.length) : base) || base, MAX_TITLE_CHARS);
  return {
    type,
    title: options.title ?? (type === 'markdown' ? undefined : fallback),
    payload: text ?? data.toString('base64'),
  };
}

/**
 * Refuses, with 400, a page or sitemap URL the ingestion guard would refuse whatever DNS says (a
 * literal private or loopback address, `localhost`), unless ANSWERDESK_ALLOW_PRIVATE_NETWORK: such
 * a source would only be stored to fail. Other host names are checked when they are fetched.
 */
export function checkSourceUrl(input: sources.NewSource, allowPrivateNetwork: boolean): void {
  if (input.url !== undefined) refusePrivateHost(new URL(input.url), allowPrivateNetwork);
}

/** Checks the source's URL, then stores the source as pending and queues its ingestion. */
export async function createSource(deps: KnowledgeDeps, projectId: string, input: sources.NewSource): Promise<KnowledgeSource> {
  checkSourceUrl(input, deps.config.ANSWERDESK_ALLOW_PRIVATE_NETWORK);
  return toSource(await sources.createSource(deps, projectId, input));
}

export async function listSources(db: Db, projectId: string): Promise<KnowledgeSource[]> {
  return (await sources.listSources(db, projectId)).map(toSource);
}

export async function getSource(db: Db, projectId: string, sourceId: string): Promise<KnowledgeSource> {
  return toSource(await sources.getSource(db, projectId, sourceId));
}

export async function syncSource(deps: KnowledgeDeps, projectId: string, sourceId: string): Promise<KnowledgeSource> {
  return toSource(await sources.syncSource(deps, projectId, sourceId));
}

/**
 * Deletes the source with its chunks and jobs; the knowledge gaps it answered (the answers FAQ) are
 * reopened in the same transaction, since nothing answers their questions any more.
 */
export async function deleteSource(db: Db, projectId: string, sourceId: string): Promise<void> {
  await sources.deleteSource(db, projectId, sourceId, (trx) => reopenGapsAnsweredBy(trx, projectId, sourceId));
}
