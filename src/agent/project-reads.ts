import type { FastifyBaseLogger } from 'fastify';
import { loadEnabledActions } from '../actions/actions.js';
import type { ActionDefinition } from '../actions/definition.js';
import { secretBox } from '../lib/secret-box.js';
import type { Config } from '../config.js';
import type { TtlCache } from '../lib/ttl-cache.js';
import { listEnabledSkills, type EnabledSkill } from '../skills/skills.js';
import type { Store } from '../store/index.js';

/**
 * What an answer reads of its project's configuration: the enabled skills (for the prompt) and the
 * enabled actions (as tools). They change only on an admin write, yet every answer needs them, so the
 * HTTP layer passes reads kept in its per-node caches (see {@link projectReads}). What they return is
 * shared between answers and never changed.
 */
export interface ProjectReads {
  skills(projectId: string): Promise<readonly EnabledSkill[]>;
  /** An action whose secret headers cannot be opened is reported on `log` and left out. */
  actions(projectId: string, log: FastifyBaseLogger): Promise<readonly ActionDefinition[]>;
}

/**
 * The project reads from the database; with `caches`, each project's result is kept there (a
 * per-node cache that an admin write on this node clears, and that other nodes and the CLI reach
 * within its TTL).
 */
export function projectReads(
  deps: { store: Store; config: Config },
  caches?: { skills: TtlCache<readonly EnabledSkill[]>; actions: TtlCache<readonly ActionDefinition[]> },
): ProjectReads {
  const db = deps.store.db;
  const skills = (projectId: string) => listEnabledSkills(db, projectId);
  const actions = (projectId: string, log: FastifyBaseLogger) =>
    loadEnabledActions(db, secretBox(deps.config), projectId, (actionId, err) =>
      log.error({ actionId, err: (err as Error).message }, 'action left out: its secret headers cannot be decrypted'),
    );
  if (!caches) return { skills, actions };
  return {
    skills: async (projectId) => caches.skills.getOrLoad(projectId, () => skills(projectId)),
    actions: async (projectId, log) => caches.actions.getOrLoad(projectId, () => actions(projectId, log)),
  };
}
