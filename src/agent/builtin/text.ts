/**
 * Small, dependency-free text helpers for the builtin model's decisions: word lists without filler
 * words, a crude stemmer (so "orders" meets "order"), overlap scores and sentence splitting.
 */

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over after before is are was were be been ' +
    'being am do does did doing have has had having i me my mine we us our you your yours he she it its they them their ' +
    'this that these those what which who whom whose when where why how can could would should will shall may might must ' +
    'not no yes so too very just also please pls thanks thank hi hello hey there here some any all as up out off again ' +
    'want need like get got know tell let help find show give make ok okay one'
  ).split(' '),
);

/** Lower-cased words (letters, digits, inner apostrophes/hyphens), in order. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
}

/**
 * A word with common English inflections cut, so "takes", "taking" and "take" all become "tak" and
 * "orders" meets "order". Crude on purpose: both sides of a comparison go through it.
 */
export function stem(word: string): string {
  let w = word.replace(/['’]s$/, '');
  if (w.length <= 3) return w;
  let cut = true;
  if (w.endsWith('ies') || w.endsWith('ied')) w = `${w.slice(0, -3)}y`;
  else if (/(ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('ly') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  else cut = false;
  // "shipped" → "shipp" → "ship"; "running" → "runn" → "run".
  if (cut && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** Stems of the words that carry meaning (no stopwords, no one-letter words). */
export function keywords(text: string): string[] {
  return words(text)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w))
    .map(stem);
}

/** Share of `query`'s distinct keywords that appear in `text` (0..1). */
export function coverage(query: string[], text: string[] | Set<string>): number {
  const q = new Set(query);
  if (q.size === 0) return 0;
  const t = text instanceof Set ? text : new Set(text);
  let hit = 0;
  for (const w of q) if (t.has(w)) hit++;
  return hit / q.size;
}

/** Splits a passage into sentences, keeping list items and headings as their own lines. */
export function sentences(text: string): string[] {
  return text
    .split(/\n+/)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}"“(])/u))
    .map((s) => s.replace(/^[\s#>*-]+/, '').trim())
    .filter((s) => s.length > 0);
}

/** Cuts `text` at a word boundary so it is at most `max` characters, adding "…" when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Human label for an identifier: `track_order` / `trackOrder` → "track order". */
export function humanize(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
}
