/**
 * Words as the ranking and the relevance checks compare them: lower-cased, identifiers split
 * (`bodyLimit`, `body_limit` and `body-limit` all read as "body limit"), a light English stemmer
 * so "orders" meets "order". Both sides of every comparison go through the same functions.
 */

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over after before is are was were be ' +
    'been being am do does did doing have has had having i me my we us our you your he she it its they them their this ' +
    'that these those what which who whom whose when where why how can could would should will shall may might must not ' +
    'no so too very just also please thanks hi hello hey there here some any all as up out off again want need like get ' +
    'got know tell let help find show give make ok okay one two way ways there than many much between difference possible able ' +
    'anyone someone something anything thing things really actually long until ' +
    // Chat shorthand for the words above and for courtesies ("pls", "thx", "ur", "smth").
    'pls plz thx thanx thnx ty tia btw fyi imo idk tho smth sth ur cuz ' +
    // Negations and contractions typed without their apostrophe ("why doesnt it", "i cant"): "cant"
    // and "wont" are English words too, which help content never uses, so they weighed the most.
    'dont doesnt didnt cant wont isnt arent wasnt werent shouldnt wouldnt couldnt havent hasnt hadnt im ive youre theyre thats whats ' +
    // Verbs and adverbs that frame a question ("how long does it take", "what usually happens")
    // and name nothing the answer must hold.
    'take takes took taking happen happens happened usually normally typically ever still already'
  ).split(' '),
);

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/**
 * The words of a text, camelCase identifiers split into their parts (`bodyLimit` → body, limit;
 * `snake_case` and `kebab-case` split at their punctuation), lower-cased, in order. A word that
 * starts with a capital is a name (PostgreSQL, MySQL, PgBouncer) and stays whole.
 */
export function splitWords(text: string): string[] {
  const raw = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  const out: string[] = [];
  for (const w of raw) {
    const lower = w.toLowerCase();
    // Most words have no capital at all; only a lower-case letter followed by one is an identifier
    // ("2FA" is one word, as both databases' tokenizers read it).
    if (lower === w || !/^\p{Ll}/u.test(w)) {
      out.push(lower);
      continue;
    }
    for (const p of w.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').split(' ')) out.push(p.toLowerCase());
  }
  return out;
}

/**
 * The words of a text written as names, lower-cased: with a capital after their first letter
 * ("JSONB", "NVMe", "PgBouncer"), or capitalised where a sentence does not start ("pay with
 * Venmo"). A name the content does not know is not a misspelling of a word it does.
 */
export function writtenAsNames(text: string): Set<string> {
  const names = new Set<string>();
  let end = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    // A sentence opens at the text's start and after a full stop, a question or exclamation mark,
    // or a line break (read on the gap since the word before: one pass over the text).
    const opensSentence = end === 0 || /[.!?\n]/.test(text.slice(end, m.index));
    end = m.index + w.length;
    if (w === w.toLowerCase()) continue;
    if (/\p{Lu}/u.test(w.slice(1)) || !opensSentence) names.add(w.toLowerCase());
  }
  return names;
}

/**
 * The words of a text's code spans ("use `git stash export` to…"), lower-cased as splitWords reads
 * them: a command, an option or an identifier typed as it is, which a paraphrase does not change;
 * and of the options it writes without backticks ("--replace-text"). A dotted or underscored name
 * outside backticks is not taken: "console.log" and "json.dumps" are asked about in words a passage
 * may say otherwise (measured in docs/knowledge.md, "Questions as typed in a chat").
 */
export function codeWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]+)`/g)) for (const w of splitWords(m[1]!)) words.add(w);
  // A command's option typed without backticks, as in a chat (--replace-text).
  for (const m of text.matchAll(/(?<![\p{L}\p{N}-])--\p{L}[\p{L}\p{N}-]*/gu)) for (const w of splitWords(m[0])) words.add(w);
  return words;
}

/** camelCase identifiers of a text, lower-cased, each with its parts: `bodyLimit` → ["bodylimit", ["body", "limit"]]. */
export function camelIdentifiers(text: string): Array<[string, string[]]> {
  const found: Array<[string, string[]]> = [];
  for (const w of text.match(/\b\p{Ll}+(?:\p{Lu}\p{Ll}+)+\b/gu) ?? []) {
    found.push([w.toLowerCase(), splitWords(w)]);
  }
  return found;
}

/** A crude stem: common English inflections cut ("takes", "taking" → "tak"). */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/(ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('ly') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** Stems of the meaningful words of a text (stopwords and one-letter words left out), in order. */
export function termsOf(text: string): string[] {
  return splitWords(text)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w))
    .map(stem);
}
