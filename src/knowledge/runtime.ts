import type { Config } from '../config.js';
import { Signal } from '../lib/signal.js';
import type { Store } from '../store/index.js';
import { createEmbedder, type Embedder } from './embeddings.js';
import { DocumentParser } from './parser.js';
import { createKnowledgeSearch, type KnowledgeSearch } from './search/index.js';

/** The knowledge machinery of one app instance, built once at boot. */
export interface KnowledgeRuntime {
  search: KnowledgeSearch;
  embedder: Embedder | null;
  /** Reads documents for ingestion, all but small plain text and FAQs in a worker thread. */
  parser: DocumentParser;
  /** Notified when a job is queued: wakes this process's ingestion workers at once. */
  jobQueued: Signal;
}

/** What the knowledge functions need of the app's deps. */
export interface KnowledgeDeps {
  config: Config;
  store: Store;
  knowledge: KnowledgeRuntime;
}

/**
 * The search implementation for the store's database, the embedder named by the config and the
 * document parser, shared by the API, the agent tool and the ingestion worker.
 */
export function createKnowledgeRuntime(config: Config, store: Store): KnowledgeRuntime {
  const embedder = createEmbedder(config);
  return { search: createKnowledgeSearch(store, embedder), embedder, parser: new DocumentParser(), jobQueued: new Signal() };
}
