import type { AppDeps } from '../http/context.js';
import { createEmbedder, type Embedder } from './embeddings.js';
import { createKnowledgeSearch, type KnowledgeSearch } from './search/index.js';

/** The knowledge machinery of one app instance, built once from its deps. */
export interface KnowledgeRuntime {
  search: KnowledgeSearch;
  embedder: Embedder | null;
  /** Set while an ingestion worker runs in this process; new jobs wake it at once. */
  wakeWorker: (() => void) | null;
}

const runtimes = new WeakMap<AppDeps, KnowledgeRuntime>();

/**
 * The knowledge runtime of these deps: the search implementation for the store's database and the
 * embedder named by the config, chosen on first use and shared by the API, the agent tool and the
 * ingestion worker.
 */
export function knowledgeFor(deps: AppDeps): KnowledgeRuntime {
  let runtime = runtimes.get(deps);
  if (!runtime) {
    const embedder = createEmbedder(deps.config);
    runtime = { search: createKnowledgeSearch(deps.store, embedder), embedder, wakeWorker: null };
    runtimes.set(deps, runtime);
  }
  return runtime;
}
