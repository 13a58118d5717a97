import { readFileSync } from 'node:fs';

/**
 * Synonyms from WordNet 3.0 (Princeton University; its license in WORDNET-LICENSE beside this
 * file): for a noun or verb, the other words of its most frequent sense, as
 * scripts/wordnet-synonyms.ts wrote them. Beside the short everyday list (synonyms.ts), they bridge
 * a question's word that the content never uses to one it does ("xmas" → "christmas", "bought" →
 * "purchase"); queryGroups decides when they are used.
 *
 * The table is read on the first lookup and kept as one string with its line offsets (1.4 MB), where
 * a map of its 44,000 entries would cost several times that in objects; a lookup is a binary search.
 */
let table: { text: string; starts: Uint32Array } | undefined;

function load(): { text: string; starts: Uint32Array } {
  const text = readFileSync(new URL('./wordnet-synonyms.txt', import.meta.url), 'utf8');
  const offsets = [0];
  for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) offsets.push(i + 1);
  return { text, starts: Uint32Array.from(offsets) };
}

/**
 * WordNet's base forms of an inflected word, as its `morphy` finds them: the endings regular
 * nouns and verbs take, cut ("boxes" → box, "copied" → copy). Irregular forms are in the table.
 */
const DETACH: Array<[string, string]> = [
  ['s', ''], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y'],
  ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', ''],
];

/**
 * WordNet's synonyms of a word (lower-case, as the question has it), each a phrase of one or two
 * words: the word's own when WordNet knows it, else those of its base forms; none when it has none.
 * A word is not stemmed to look it up: the search's crude stem would take "mars" for "mar".
 */
export function wordnetSynonyms(word: string): string[][] {
  const own = lookup(word);
  if (own) return own;
  const found: string[][] = [];
  const seen = new Set<string>();
  for (const [ending, base] of DETACH) {
    if (!word.endsWith(ending) || word.length - ending.length < 2) continue;
    const form = word.slice(0, -ending.length) + base;
    if (seen.has(form)) continue;
    seen.add(form);
    for (const phrase of lookup(form) ?? []) if (!found.some((f) => f.join(' ') === phrase.join(' '))) found.push(phrase);
  }
  return found;
}

function lookup(word: string): string[][] | undefined {
  table ??= load();
  const { text, starts } = table;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const start = starts[mid]!;
    const tab = text.indexOf('\t', start);
    const key = text.slice(start, tab);
    if (key === word) {
      const end = text.indexOf('\n', tab);
      return text
        .slice(tab + 1, end === -1 ? undefined : end)
        .split('|')
        .map((phrase) => phrase.split(' '));
    }
    if (key < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
