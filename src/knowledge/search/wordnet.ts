import { readFileSync } from 'node:fs';

/**
 * Synonyms from WordNet 3.0 (Princeton University; its license in WORDNET-LICENSE beside this
 * file): for a noun or verb, the other words of its most frequent sense, as
 * scripts/wordnet-synonyms.ts wrote them. Beside the short everyday list (synonyms.ts), they bridge
 * a question's word that the content never uses to one it does ("xmas" → "christmas", "bought" →
 * "purchase"); queryGroups decides when they are used.
 *
 * The table also lists every other word WordNet knows, without synonyms (isEnglishWord). It is read
 * on the first lookup and kept as one string with its line offsets (1.8 MB), where a map of its
 * 82,000 entries would cost several times that in objects; a lookup is a binary search.
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
/** And an adjective's ("faster" → fast, "safest" → safe). */
const DETACH_ADJECTIVE: Array<[string, string]> = [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']];

/**
 * WordNet's synonyms of a word (lower-case, as the question has it), each a phrase of one or two
 * words: the word's own when WordNet knows it, else those of its base forms; none when it has none.
 * A word is not stemmed to look it up: the search's crude stem would take "mars" for "mar".
 */
export function wordnetSynonyms(word: string): string[][] {
  // A word listed without synonyms of its own (an adjective: "jumping") may still be a form of one
  // with some ("jump").
  const own = lookup(word);
  if (own?.length) return own;
  const found: string[][] = [];
  for (const form of baseForms(word, DETACH)) {
    for (const phrase of lookup(form) ?? []) if (!found.some((f) => f.join(' ') === phrase.join(' '))) found.push(phrase);
  }
  return found;
}

/** Whether WordNet knows the word (lower-case), as it is or by one of its base forms. */
export function isEnglishWord(word: string): boolean {
  return lookup(word) !== undefined || baseForms(word, INFLECTED).some((form) => lookup(form) !== undefined);
}

/**
 * The endings an English word is recognised by: morphy's, except "-es" cut to nothing, which
 * English writes only after an "o" ("goes") or a hissing sound, which have their own entries; with
 * it, "typees" and "moodes" would read as inflected "type" and "mood".
 */
const INFLECTED: Array<[string, string]> = [...DETACH.filter(([ending, base]) => !(ending === 'es' && base === '')), ['oes', 'o'], ...DETACH_ADJECTIVE];

/** The base forms morphy would try for a word by the given endings, each once. */
function baseForms(word: string, rules: Array<[string, string]>): string[] {
  const forms: string[] = [];
  for (const [ending, base] of rules) {
    if (!word.endsWith(ending) || word.length - ending.length < 2) continue;
    const form = word.slice(0, -ending.length) + base;
    if (!forms.includes(form)) forms.push(form);
  }
  return forms;
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
      const synonyms = text.slice(tab + 1, end === -1 ? undefined : end);
      return synonyms === '' ? [] : synonyms.split('|').map((phrase) => phrase.split(' '));
    }
    if (key < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
