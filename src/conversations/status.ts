import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { DEFAULT_TTL_MINUTES, type Project } from '../projects/project.js';
import type { ConversationsTable } from '../store/schema.js';

export type ConversationStatus = ConversationsTable['status'];

/**
 * The rule for a conversation's status, in one place: CLOSED when closed explicitly, or when its
 * last activity is older than this cutoff (idle past the project's `conversationTtlMinutes`).
 * Computed on read, in JavaScript and in SQL alike, so expiry never depends on a timer having run.
 */
export function idleCutoff(project: Project, at = Date.now()): string {
  return new Date(at - (project.settings.conversationTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000).toISOString();
}

/** The status of a stored conversation now (see {@link idleCutoff}). */
export function effectiveStatus(row: { status: ConversationStatus; updated_at: string }, project: Project, at = Date.now()): ConversationStatus {
  return row.status === 'ACTIVE' && row.updated_at >= idleCutoff(project, at) ? 'ACTIVE' : 'CLOSED';
}

/**
 * The same rule as an SQL condition on `conversations` (its columns qualified by `alias` when the
 * query names the table so): true for the conversations whose status is `status`.
 */
export function statusCondition(status: ConversationStatus, cutoff: string, alias?: string): RawBuilder<SqlBool> {
  const column = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  const active = sql<SqlBool>`(${column('status')} = ${'ACTIVE'} and ${column('updated_at')} >= ${cutoff})`;
  return status === 'ACTIVE' ? active : sql<SqlBool>`not ${active}`;
}
