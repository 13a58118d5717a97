import { now } from '../lib/ids.js';
import { storable } from '../lib/nul.js';
import { isUniqueViolation } from '../store/index.js';
import { enqueueIngestion } from './jobs.js';
import type { KnowledgeDeps } from './runtime.js';
import { createSource, getSource, type SourceRow } from './sources.js';

/** Title of the FAQ source that answers written for knowledge gaps go to. */
export const ANSWERS_SOURCE_TITLE = 'Answers from the support team';
/**
 * What marks that source among the project's FAQ sources (its `options`), whatever its title
 * becomes. A unique index (migration 017) allows one per project.
 */
const ANSWERS_MARK = JSON.stringify({ role: 'answers' });

export interface FaqItem {
  question: string;
  answer: string;
}

/**
 * Adds a question and its answer to the project's answers source, a FAQ source created on first
 * use, and queues its ingestion so the item becomes searchable (the items already there stay
 * searchable meanwhile). The same question again (ignoring case and spacing) replaces its answer
 * instead of adding a second item, so a retried call does not duplicate it. Two first uses at once
 * make one source: the later insert conflicts, and its item joins the earlier one's source.
 */
export async function addFaqItem(deps: KnowledgeDeps, projectId: string, input: FaqItem): Promise<SourceRow> {
  const item = { question: storable(input.question).trim(), answer: storable(input.answer).trim() };
  const db = deps.store.db;
  for (let attempt = 0; ; attempt++) {
    const existing = await db
      .selectFrom('knowledge_sources')
      .select(['id', 'payload', 'updated_at'])
      .where('project_id', '=', projectId)
      .where('type', '=', 'faq')
      .where('options', '=', ANSWERS_MARK)
      .executeTakeFirst();
    if (!existing) {
      try {
        const created = await createSource(deps, projectId, { type: 'faq', title: ANSWERS_SOURCE_TITLE, payload: JSON.stringify([item]), options: { role: 'answers' } });
        return getSource(db, projectId, created.id);
      } catch (err) {
        // Another resolve created it meanwhile (the unique index knowledge_sources_one_answers):
        // read it again and add this item to it.
        if (!isUniqueViolation(err) || attempt >= 10) throw err;
        continue;
      }
    }
    const items = JSON.parse(existing.payload ?? '[]') as FaqItem[];
    const same = items.findIndex((i) => sameQuestion(i.question, item.question));
    if (same >= 0) items[same] = item;
    else items.push(item);
    const written = await db.transaction().execute(async (trx) => {
      // Written only if nobody changed the source since it was read: two answers added at once
      // must not overwrite each other (the loser reads again).
      const res = await trx
        .updateTable('knowledge_sources')
        .set({ payload: JSON.stringify(items), status: 'pending', updated_at: later(existing.updated_at) })
        .where('id', '=', existing.id)
        .where('updated_at', '=', existing.updated_at)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      // A queued job reads the payload when it runs, so it takes the new item along; a running one
      // has read it already, so another job follows it.
      const queued = await trx.selectFrom('knowledge_jobs').select('id').where('source_id', '=', existing.id).where('status', '=', 'queued').executeTakeFirst();
      if (!queued) await enqueueIngestion(trx, existing.id, projectId);
      return true;
    });
    if (written) {
      deps.knowledge.jobQueued.notify();
      return getSource(db, projectId, existing.id);
    }
    if (attempt >= 10) throw new Error('The answers source kept changing; try again');
  }
}

const sameQuestion = (a: string, b: string) => a.toLowerCase().replace(/\s+/g, ' ') === b.toLowerCase().replace(/\s+/g, ' ');

/** Now, or a millisecond after `previous` when the clock has not moved on: the version check needs a new value. */
function later(previous: string): string {
  const at = now();
  return at > previous ? at : new Date(Date.parse(previous) + 1).toISOString();
}
