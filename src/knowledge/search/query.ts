/**
 * Words that match nearly every chunk: dropped from full-text queries, where they would only add
 * noise to the ranking and cost time (an OR query over "the" touches every row).
 */
const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over after before is are was were be ' +
    'been being am do does did doing have has had having i me my we us our you your he she it its they them their this ' +
    'that these those what which who whom whose when where why how can could would should will shall may might must not ' +
    'no so too very just also please thanks hi hello hey there here some any all as up out off again'
  ).split(' '),
);

/**
 * The searchable terms of a user's question: lower-cased words (letters and digits only, so no
 * query syntax of either database can be injected), stopwords removed, de-duplicated. When every
 * word is a stopword the words themselves are kept, so "what is this" still searches something.
 */
export function queryTerms(query: string, max = 32): string[] {
  const all = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const meaningful = all.filter((w) => !STOPWORDS.has(w));
  return [...new Set(meaningful.length > 0 ? meaningful : all)].slice(0, max);
}

/** Whether a word is left out of full-text queries. */
export function isQueryStopword(word: string): boolean {
  return STOPWORDS.has(word);
}
