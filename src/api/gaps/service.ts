import { keywords } from '../../agent/builtin/text.js';
import { claimGap, dismissGap, gapAnswered, knowledgeGaps, releaseGap, type GapReport, type GapRow } from '../../conversations/gaps.js';
import type { AppDeps } from '../../deps.js';
import { Conflict } from '../../lib/errors.js';
import { addFaqItem } from '../../knowledge/faq.js';
import { whileSourceExists } from '../../knowledge/sources.js';
import type { Project } from '../../projects/project.js';
import { toSource } from '../knowledge/service.js';
import type { KnowledgeSource } from '../knowledge/schema.js';
import type { Gap } from './schema.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export function toGap(row: GapRow): Gap {
  return {
    id: row.id,
    question: row.question,
    status: row.status,
    answer: row.answer,
    faqSourceId: row.faq_source_id,
    closedAt: row.closed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The key terms questions are grouped by (gaps and analytics' top questions): the builtin model's
 * own content words and stems, so that grouping and answering read a question the same way.
 */
export const questionTerms = (text: string) => [...new Set(keywords(text))];

/**
 * The key terms of a project's questions, each misspelling read first as the word of the project's
 * content it stands for, as search reads it: "how do I rset my pasword" groups with "How do I reset
 * my password?". A question spelt right keeps its terms; a gap stored from a misspelt question's
 * own terms, before they were respelled, still matches by those (knowledgeGaps' `asWritten`).
 */
export async function projectQuestionTerms(deps: AppDeps, projectId: string): Promise<(text: string) => string[]> {
  const respell = await deps.knowledge.search.respeller(projectId);
  return (text) => questionTerms(respell(text));
}

/** The open gaps of the last `days` days, most frequent first. */
export async function listGaps(deps: AppDeps, project: Project, days: number, at = Date.now()): Promise<GapReport[]> {
  return knowledgeGaps(deps.store.db, project.id, new Date(at - days * DAY_MS).toISOString(), await projectQuestionTerms(deps, project.id), questionTerms);
}

/**
 * Answers a gap: the question and the answer go into the project's FAQ source of answers (created
 * on first use, indexed in the background), and the gap is marked resolved.
 */
export async function resolveGap(deps: AppDeps, project: Project, gapId: string, answer: string): Promise<{ gap: Gap; source: KnowledgeSource }> {
  // Claimed first, so that of two resolves at once one adds its answer and the other gets 409; put
  // back as it was when the answer could not be added.
  const claim = await claimGap(deps.store.db, project.id, gapId, answer);
  for (let attempt = 1; ; attempt++) {
    const source = await addFaqItem(deps, project.id, { question: claim.before.question, answer }).catch(async (err: unknown) => {
      // Best effort: the error that matters is the one that stopped the answer. A claim left behind
      // (the database gone for the release too) may be taken again after a while (claimGap).
      await releaseGap(deps.store.db, claim).catch(() => undefined);
      throw err;
    });
    // Recorded under the source's lock: a delete of the source at the same moment waits, then
    // reopens the gap with the others answered there; or it came first, and the answer goes to the
    // answers source made anew, as it would a moment later (rather than name a deleted source).
    const resolved = await whileSourceExists(deps.store.db, source.id, (trx) => gapAnswered(trx, claim, source.id));
    if (resolved) return { gap: toGap(resolved), source: toSource(source) };
    if (attempt >= 3) {
      await releaseGap(deps.store.db, claim).catch(() => undefined);
      // A plain error here would be a 500 for a race of the caller's own making: a documented 409.
      throw Conflict('The answers source was deleted meanwhile; try again');
    }
  }
}

export async function dismiss(deps: AppDeps, project: Project, gapId: string): Promise<Gap> {
  return toGap(await dismissGap(deps.store.db, project.id, gapId));
}
