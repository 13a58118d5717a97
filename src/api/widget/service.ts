import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { handoffPolicy } from '../../conversations/handoff.js';
import type { TtlCache } from '../../lib/ttl-cache.js';
import type { Project } from '../../projects/project.js';
import { listEnabledSkills } from '../../skills/skills.js';
import type { Database } from '../../store/index.js';
import { WIDGET_DEFAULTS, type WidgetConfig } from './schema.js';

type Db = Kysely<Database>;

/** Enabled skills of a project in creation order, as the widget lists them (never their instructions). */
export async function listAvailableSkills(db: Db, projectId: string): Promise<WidgetConfig['availableSkills']> {
  return (await listEnabledSkills(db, projectId)).map(({ id, name, description }) => ({ id, name, description }));
}

/** Defaults, then the project's `settings.widget` field by field, then the skills. */
export function mergeWidgetConfig(project: Project, skills: WidgetConfig['availableSkills']): WidgetConfig {
  const handoff = handoffPolicy(project);
  return {
    ...WIDGET_DEFAULTS,
    ...project.settings.widget,
    availableSkills: skills,
    handoff: { enabled: handoff.enabled, officeHoursText: handoff.officeHoursText },
  };
}

export interface SerializedConfig {
  /** The UTF-8 bytes sent: a Buffer, so no request re-encodes the text or counts its bytes again. */
  body: Buffer;
  /** Strong validator: a hash of the exact bytes of `body`. */
  etag: string;
}

/**
 * The widget config of a project as bytes plus ETag. The project row comes with the key lookup; the
 * serialized config is kept in a per-node cache keyed by project and its `updatedAt` (cleared by
 * admin writes on this node, at most ANSWERDESK_CACHE_TTL_MS old otherwise), so a busy widget costs
 * neither a query nor a hash per page view. A cached config is returned as it is, not as a promise:
 * the common case then takes no trip through the microtask queue.
 */
export function widgetConfigSource(db: Db, cache: TtlCache<SerializedConfig>): (project: Project) => SerializedConfig | Promise<SerializedConfig> {
  const load = async (project: Project) => {
    const body = Buffer.from(JSON.stringify(mergeWidgetConfig(project, await listAvailableSkills(db, project.id))));
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
  };
  return (project) => cache.getOrLoad(`${project.id}:${project.updatedAt}`, () => load(project));
}

/**
 * RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
