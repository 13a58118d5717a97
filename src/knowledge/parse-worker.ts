import { parentPort } from 'node:worker_threads';
import { parseDocument, type DocumentInput } from './parse.js';
import type { ChunkDraft } from './types.js';

/** Chunks per message back: each message is deserialized on the main thread in one go. */
const CHUNKS_PER_MESSAGE = 500;

/** What the parser's worker sends back for a request `id`. */
export type ParseReply =
  | { id: number; type: 'chunks'; chunks: ChunkDraft[] }
  | { id: number; type: 'done'; title: string; links: string[] }
  | { id: number; type: 'error'; message: string };

const port = parentPort!;
port.on('message', async ({ id, input }: { id: number; input: DocumentInput }) => {
  const reply = (message: ParseReply) => port.postMessage(message);
  try {
    const doc = await parseDocument(input);
    for (let i = 0; i < doc.chunks.length; i += CHUNKS_PER_MESSAGE) reply({ id, type: 'chunks', chunks: doc.chunks.slice(i, i + CHUNKS_PER_MESSAGE) });
    reply({ id, type: 'done', title: doc.title, links: doc.links });
  } catch (err) {
    reply({ id, type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
});
