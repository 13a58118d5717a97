/**
 * Groups questions that ask the same thing in other words: each question becomes a set of key
 * terms (stemmed content words, given by the caller so that the agent's own text rules and the
 * project's synonyms apply), and two questions belong together when the Jaccard similarity of their
 * sets reaches GROUP_SIMILARITY. A question joins the group with the most similar member
 * (single link), so "Do you ship to Mars?" and "Is shipping to Mars possible?" meet.
 */

/** Jaccard similarity of two term sets at which two questions are the same question. */
export const GROUP_SIMILARITY = 0.5;

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

export interface Grouped<T> {
  /** The members, in the order given. */
  members: T[];
  /** Terms of each member, parallel to `members`. */
  terms: Array<Set<string>>;
}

/**
 * Groups `items` (oldest first, so each group's first member is its earliest question). Items whose
 * text has no key term are left out: there is nothing to group them by.
 */
export function groupQuestions<T>(items: readonly T[], textOf: (item: T) => string, termsOf: (text: string) => string[]): Array<Grouped<T>> {
  const groups: Array<Grouped<T>> = [];
  // The groups holding each term: a question is compared only with the groups it shares a term
  // with (a similarity above zero needs one), so thousands of different questions are not each
  // compared with every group.
  const holding = new Map<string, Set<number>>();
  for (const item of items) {
    const terms = new Set(termsOf(textOf(item)));
    if (terms.size === 0) continue;
    const candidates = new Set<number>();
    for (const t of terms) for (const g of holding.get(t) ?? []) candidates.add(g);
    let best = -1;
    let bestScore = 0;
    // In the order the groups were made: of equally similar groups, the earliest wins.
    for (const g of [...candidates].sort((a, b) => a - b)) {
      const score = Math.max(...groups[g]!.terms.map((t) => jaccard(terms, t)));
      if (score >= GROUP_SIMILARITY && score > bestScore) {
        best = g;
        bestScore = score;
      }
    }
    if (best < 0) {
      best = groups.length;
      groups.push({ members: [], terms: [] });
    }
    groups[best]!.members.push(item);
    groups[best]!.terms.push(terms);
    for (const t of terms) {
      const held = holding.get(t);
      if (held) held.add(best);
      else holding.set(t, new Set([best]));
    }
  }
  return groups;
}

/**
 * Which member stands for a group (its question in a report, a gap's question and so the question
 * of the FAQ item that resolves it): the first whose terms are its terms as written (`written`,
 * parallel to the members), that is, spelt as the content spells it, else the first.
 */
export function leadOf<T>(group: Grouped<T>, written: ReadonlyArray<ReadonlySet<string>>): number {
  const lead = group.terms.findIndex((terms, i) => terms.size === written[i]!.size && [...terms].every((t) => written[i]!.has(t)));
  return Math.max(0, lead);
}

/** Texts read between two turns of the event loop by termsOfEach. */
const TEXTS_PER_TURN = 50;

/**
 * The key terms of each of `texts`, read ahead of grouping, each distinct text once, giving the
 * event loop a turn every TEXTS_PER_TURN texts: a report reads up to thousands of messages, and
 * reading a misspelling costs a look at every spelling one edit away (see respellText), so a run of
 * long messages of gibberish slows that report, not every other request. Returns the terms of a
 * text read ahead.
 */
export async function termsOfEach(texts: readonly string[], termsOf: (text: string) => string[]): Promise<(text: string) => string[]> {
  const read = new Map<string, string[]>();
  let since = 0;
  for (const text of texts) {
    if (read.has(text)) continue;
    read.set(text, termsOf(text));
    if (++since >= TEXTS_PER_TURN) {
      since = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return (text) => read.get(text) ?? termsOf(text);
}
