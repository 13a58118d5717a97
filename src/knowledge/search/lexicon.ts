import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { askingSentences } from './courtesy.js';
import { synonymsAt } from './synonyms.js';
import { isEnglishWord, wordnetSynonyms } from './wordnet.js';
import { camelIdentifiers, isStopword, splitWords, stem, termsOf, writtenAsNames } from './terms.js';

/**
 * What a project's own content teaches the search: how rare each term is (document frequency over
 * the project's visible chunks, for IDF weights), which camelCase identifiers it uses (so "body
 * limit" also finds `bodyLimit`), and which acronyms it defines ("Write-Ahead Logging (WAL)"), so
 * a question with either form finds the other. Learned from the chunks alone; the one word list
 * search ships (everyday synonyms, synonyms.ts) only brings in words this content uses.
 */
export interface Lexicon {
  /** Visible chunks counted. */
  size: number;
  /** The project's chunks when it was learned (`size` is a sample of them when there are many). */
  chunks: number;
  /** Stem → chunks that hold it. */
  df: Map<string, number>;
  /** Terms in a chunk on average (title, headings and text, as `termsOf` reads them): BM25's length norm. */
  avgLength: number;
  /** "body limit" → "bodylimit": identifiers the content writes in camelCase. */
  joined: Map<string, string>;
  /** "wal" → ["write ahead logging"], and back: "write ahead logging" → ["wal"]. */
  aliases: Map<string, string[]>;
}

export const EMPTY_LEXICON: Lexicon = { size: 0, chunks: 0, df: new Map(), avgLength: 0, joined: new Map(), aliases: new Map() };

/**
 * Inverse document frequency of a stem (BM25's form, never negative). A term the project never
 * uses weighs the most: a question that hinges on it is not answered by this content.
 */
export function idf(lexicon: Lexicon, term: string): number {
  const n = lexicon.df.get(term) ?? 0;
  return Math.log(1 + (lexicon.size - n + 0.5) / (n + 0.5));
}

/** "Write-Ahead Logging (WAL)" and "WAL (write-ahead logging)": the acronym and its words. */
export function acronymsIn(text: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const m of text.matchAll(/((?:[\p{L}][\p{L}-]*\s+){1,6})\((\p{Lu}[\p{Lu}\d]{1,7})s?\)/gu)) {
    const phrase = matchInitials(m[1]!.trim().split(/\s+/), m[2]!);
    if (phrase) found.push([m[2]!.toLowerCase(), phrase]);
  }
  for (const m of text.matchAll(/\b(\p{Lu}[\p{Lu}\d]{1,7})s?\s+\(((?:[\p{L}][\p{L}-]*\s*){1,6})\)/gu)) {
    const phrase = matchInitials(m[2]!.trim().split(/\s+/), m[1]!);
    if (phrase) found.push([m[1]!.toLowerCase(), phrase]);
  }
  return found;
}

/**
 * The shortest tail of `words` whose initials spell the acronym in order (its letters a
 * subsequence of the words' letters, starting with the first word's initial), lower-cased and
 * split; null when none does.
 */
function matchInitials(words: string[], acronym: string): string | null {
  const acro = acronym.toLowerCase().replace(/\d/g, '');
  for (let n = 1; n <= words.length; n++) {
    const tail = words.slice(-n).join(' ').split(/[\s-]+/).map((w) => w.toLowerCase());
    if (tail.length < 2 || tail[0]![0] !== acro[0]) continue;
    let i = 0;
    for (const w of tail) {
      let j = 0;
      while (i < acro.length && j < w.length) {
        if (w[j] === acro[i]) i++;
        else if (j === 0) break;
        j++;
      }
    }
    if (i === acro.length) return tail.join(' ');
  }
  return null;
}

/** Chunks read to learn a lexicon: a larger project is sampled evenly (IDF from a sample is a fair estimate). */
export const LEXICON_SAMPLE = 20_000;
/** Chunks handled between two turns of the event loop while learning. */
const LEXICON_BATCH = 200;

/**
 * Builds a project's lexicon from its visible chunks (every k-th chunk when it has more than
 * LEXICON_SAMPLE), yielding to the event loop between batches so a large project does not stall
 * the requests being served meanwhile.
 */
export async function buildLexicon(db: Kysely<Database>, projectId: string, chunkCount = 0): Promise<Lexicon> {
  const every = Math.max(1, Math.ceil(chunkCount / LEXICON_SAMPLE));
  const { rows } = await sql<{ title: string; headings: string; text: string }>`
    select c.title, c.headings, c.text from knowledge_chunks c
    join knowledge_sources s on s.id = c.source_id and s.generation = c.generation
    where c.project_id = ${projectId} and c.rowid % ${every} = 0`.execute(db);
  const df = new Map<string, number>();
  const joined = new Map<string, string>();
  const aliases = new Map<string, string[]>();
  const alias = (a: string, b: string) => {
    const list = aliases.get(a) ?? [];
    if (!list.includes(b)) aliases.set(a, [...list, b]);
  };
  let terms = 0;
  for (const [i, row] of rows.entries()) {
    if (i > 0 && i % LEXICON_BATCH === 0) await new Promise((r) => setImmediate(r));
    const all = `${row.title}\n${row.headings}\n${row.text}`;
    const own = termsOf(all);
    terms += own.length;
    for (const t of new Set(own)) df.set(t, (df.get(t) ?? 0) + 1);
    for (const [word, parts] of camelIdentifiers(all)) if (parts.length > 1) joined.set(parts.join(' '), word);
    for (const [acro, phrase] of acronymsIn(all)) {
      alias(acro, phrase);
      alias(phrase, acro);
    }
  }
  // A camelCase identifier's own stem counts as a term too ("bodylimit").
  for (const word of joined.values()) if (!df.has(stem(word))) df.set(stem(word), 1);
  return { size: rows.length, chunks: Math.max(chunkCount, rows.length), df, avgLength: rows.length ? terms / rows.length : 0, joined, aliases };
}

/**
 * About how many of the project's chunks hold a group: its phrases' matches added up (at most the
 * project's chunks), a phrase as many as its rarest word. From the sampled document frequencies,
 * so an estimate; search uses it only to choose how to read a query part's matches. Stopwords and
 * one-letter words are not counted (they weigh nothing) and are searched only when a question has
 * no other word ("what is this"): they count as held by every chunk.
 */
export function groupMatches(lexicon: Lexicon, group: TermGroup): number {
  if (lexicon.size === 0) return 0;
  const df = (w: string) => (w.length <= 1 || isStopword(w) ? lexicon.size : (lexicon.df.get(stem(w)) ?? 0));
  const share = group.reduce((sum, words) => sum + Math.min(...words.map(df)) / lexicon.size, 0);
  return Math.round(Math.min(1, share) * lexicon.chunks);
}

/** A group of interchangeable ways to say one thing of the question; each way is a phrase of words. */
export type TermGroup = string[][];

/**
 * The question as groups of alternatives, in order: each meaningful word; two words the content
 * joins into an identifier, with the identifier as an alternative; an acronym with its words and
 * words with their acronym; a word or phrase of an everyday synonym set (synonyms.ts) with the
 * other members the content uses. The words are letters and digits only, so no query syntax can
 * be injected into either database.
 */
export function queryGroups(question: string, lexicon: Lexicon, isStop: (w: string) => boolean, max = 32): TermGroup[] {
  const all = splitWords(question);
  // A word written as a name is never taken for a misspelt stopword, and is respelled only inside it.
  const names = writtenAsNames(question);
  const meaningful = (w: string) => w.length > 1 && !isStop(w) && !isStopword(w) && (names.has(w) || !misspeltStopword(w, lexicon));
  // The words searched for, each with its place among all the question's words.
  const kept = all.flatMap((w, at) => (meaningful(w) ? [{ w, at }] : []));
  const list = kept.length > 0 ? kept : all.map((w, at) => ({ w, at }));
  const words = list.map((k) => k.w);
  const used = (alt: string[]) => alt.every((w) => lexicon.df.has(stem(w)));
  const groups: TermGroup[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < list.length && groups.length < max; i++) {
    const w = words[i]!;
    // A phrase the content abbreviates (up to four words), or an identifier split in the question.
    let taken = 0;
    for (let n = Math.min(4, list.length - i); n >= 2 && !taken; n--) {
      const phrase = words.slice(i, i + n).join(' ');
      const alts: TermGroup = [];
      if (lexicon.joined.has(phrase)) alts.push([lexicon.joined.get(phrase)!]);
      for (const a of lexicon.aliases.get(phrase) ?? []) alts.push(a.split(' '));
      if (alts.length > 0) {
        groups.push([words.slice(i, i + n), ...alts]);
        taken = n;
      }
    }
    if (taken) {
      i += taken - 1;
      continue;
    }
    // A word, or a synonym set's member, read on all the question's words ("log in" holds a stopword).
    const syn = synonymsAt(all, list[i]!.at);
    let n = 1;
    if (syn) while (i + n < list.length && list[i + n]!.at < list[i]!.at + syn.length) n++;
    const own = words.slice(i, i + n);
    i += n - 1;
    const key = own.join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    // Synonyms only where the question's own word is one the content never uses: a word it uses
    // already finds its passages, and the set's other words would only blur its ranking. A word of
    // no everyday set is looked up in WordNet.
    const others = used(own) ? [] : syn ? syn.others : n === 1 ? wordnetSynonyms(w) : [];
    let synonyms = others.filter(used);
    // A word no one uses, not even English: a misspelling of one the content uses ("pasword"),
    // unless it is that word with its end changed and the message spells that word too ("jsonb
    // to store json": two things, not a slip, where "heap mmeory … out of memory" is one).
    if (n === 1 && synonyms.length === 0 && !used(own)) {
      const spelled = respelled(w, lexicon, names.has(w));
      if (spelled && !(all.includes(spelled) && endsDiffer(w, spelled))) synonyms = [[spelled]];
    }
    groups.push([own, ...(n === 1 ? (lexicon.aliases.get(w) ?? []).map((a) => a.split(' ')) : []), ...synonyms]);
  }
  return groups;
}

/**
 * Which of the question's groups it asks about (`question` without its courtesies, see
 * withoutCourtesies): when the message has sentences that ask and sentences that only give context
 * (see askingSentences), the groups with a word of an asking sentence; every group otherwise, and
 * also when no group has one ("My build fails with EPERM on Windows. Why?"). The coverage the agent
 * decides from counts only these: "I work at a small agency and we're evaluating a few options. Do
 * you ship to Norway?" is answered by a page on shipping to Norway, which need not mention
 * agencies. The ranking still reads every word.
 */
export function askedGroups(question: string, groups: TermGroup[]): boolean[] {
  const asking = askingSentences(question);
  const focus = new Set(asking === null ? [] : splitWords(asking));
  const asked = groups.map((g) => g[0]!.some((w) => focus.has(w)));
  return asked.some(Boolean) ? asked : groups.map(() => true);
}

/**
 * A message with its misspellings read as the content's words ("pasword" as "password"), for
 * comparing messages with each other: each word that neither the content nor English knows is
 * respelled as a search respells it (see respelled), unless the message also spells that word with
 * only its end changed. A respelled word is written in lower case, as search reads it; every other
 * character stays as written. `known`, when given, keeps each word's reading for the next messages.
 */
export function respellText(text: string, lexicon: Lexicon, known?: Map<string, string | null>): string {
  const names = writtenAsNames(text);
  const all = splitWords(text);
  let tried = 0;
  return text.replace(/[\p{L}\p{N}]+/gu, (word) => {
    const w = word.toLowerCase();
    // Each try reads every spelling one edit away: a message of gibberish must not cost a report
    // of thousands of messages seconds. A question's slips are a few, in words of usual length.
    if (tried >= MAX_RESPELLED_WORDS || w.length > MAX_RESPELLED_WORD_LENGTH || w.length < MIN_RESPELLED_LENGTH || !unknownWord(w, lexicon)) return word;
    // A stopword is no slip ("with", which WordNet does not list, is not "width"), and a misspelt one
    // is read as the stopword it stands for ("woudl" as "would"), not as a content word: search
    // leaves both out (queryGroups).
    if (isStopword(w)) return word;
    tried++;
    // `known` keeps what a word was read as, across the messages of one report (a word read as a
    // name is read on its own: the same letters elsewhere need not be a name).
    const name = names.has(w);
    const key = name ? `${w}\u0000name` : w;
    let spelled = known?.get(key);
    if (spelled === undefined) {
      spelled = respelled(w, lexicon, name, !name);
      known?.set(key, spelled);
    }
    return spelled && (isStopword(spelled) || !(all.includes(spelled) && endsDiffer(w, spelled))) ? spelled : word;
  });
}

/** The most words of one message respellText tries to respell. */
export const MAX_RESPELLED_WORDS = 4;
/** Longer words are no one's slip of a word the content uses: respellText leaves them. */
const MAX_RESPELLED_WORD_LENGTH = 24;

/** Whether two words differ only at the end: a letter added, left out or changed there. */
function endsDiffer(a: string, b: string): boolean {
  return a.slice(0, -1) === b.slice(0, -1) || a.slice(0, -1) === b || b.slice(0, -1) === a;
}

/** The shortest word spelling correction is tried on: shorter words are one letter from too many others. */
export const MIN_RESPELLED_LENGTH = 4;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The words one edit from `word` (a letter left out, added, changed, or two neighbours swapped),
 * never at its first letter, which people rarely get wrong ("bcrypt" is not "scrypt"), and with
 * `keepLast` never at its last either: a name with a letter more is often another name ("JSONB"
 * is not "JSON").
 */
function* oneEditFrom(word: string, keepLast = false): Generator<string> {
  const end = keepLast ? word.length - 1 : word.length;
  for (let i = 1; i <= end; i++) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (i < end) {
      yield head + tail.slice(1);
      if (i + 1 < end) yield head + tail[1] + tail[0] + tail.slice(2);
      for (const c of LETTERS) if (c !== tail[0]) yield head + c + tail.slice(1);
    }
    for (const c of LETTERS) yield head + c + tail;
  }
}

/** A word neither the content nor English knows: a misspelling, or a name the content lacks. */
export function unknownWord(word: string, lexicon: Lexicon): boolean {
  return /^[a-z]+$/.test(word) && !lexicon.df.has(stem(word)) && !isEnglishWord(word);
}

/**
 * Whether a question's word is a misspelt stopword ("somthing", "betwen", "beofre"): unknown to the
 * content and to English, and one edit from a word that names nothing. Left out like the word it
 * stands for, where it would otherwise weigh the most, as a word the content never uses.
 */
export function misspeltStopword(word: string, lexicon: Lexicon): boolean {
  if (word.length < MIN_RESPELLED_LENGTH || !unknownWord(word, lexicon)) return false;
  for (const candidate of oneEditFrom(word)) if (isStopword(candidate)) return true;
  return false;
}

/**
 * The content's word a question's word is most likely a misspelling of: a word of at least
 * MIN_RESPELLED_LENGTH letters that neither the content nor WordNet knows (so not a name or a
 * word the content lacks: "Litestream", "teammate"), one edit from a word the content uses (see
 * oneEditFrom). Of several, the one the most chunks hold, an English word before a mere stem.
 * Null when none. With `stopwords`, a misspelt stopword (see misspeltStopword) is read as the
 * stopword, whatever the content holds, in the same pass over the spellings.
 */
export function respelled(word: string, lexicon: Lexicon, name = false, stopwords = false): string | null {
  if (word.length < MIN_RESPELLED_LENGTH || !unknownWord(word, lexicon)) return null;
  let best: string | null = null;
  let bestCount = 0;
  let bestEnglish = false;
  for (const candidate of oneEditFrom(word, name)) {
    if (stopwords && isStopword(candidate)) return candidate;
    const count = lexicon.df.get(stem(candidate)) ?? 0;
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
      bestEnglish = isEnglishWord(candidate);
    } else if (count > 0 && count === bestCount && !bestEnglish && isEnglishWord(candidate)) {
      // Of the spellings of one stem ("tabl", "table"), the English word.
      best = candidate;
      bestEnglish = true;
    }
  }
  return best;
}
