/**
 * Writes src/knowledge/search/wordnet-synonyms.txt from a WordNet 3.0 database directory (the
 * `index.*`, `data.*` and `*.exc` files; Debian's `wordnet-base` package installs them):
 *
 *   npx tsx scripts/wordnet-synonyms.ts <wordnet dict directory>
 *
 * For each noun and verb of one word, the other words of its most frequent sense (WordNet lists a
 * word's senses most frequent first), one or two words each; an irregular form (WordNet's
 * exception lists: "bought" for "buy") gets its base word and the base's synonyms. Lines are
 * `word<TAB>synonym|two words|…`, sorted by word; every other word WordNet knows (adjectives and
 * adverbs, nouns and verbs without synonyms, irregular forms) with nothing after its tab.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Senses read per word: the first, its everyday meaning. The second brought in as much noise as
 * help ("mugs" → "mark", "bunch" → "cluster"), measured in docs/knowledge.md.
 */
const SENSES = 1;
const WORD = /^[a-z]+$/;
const PHRASE = /^[a-z]+( [a-z]+)?$/;

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx scripts/wordnet-synonyms.ts <wordnet dict directory>');
  process.exit(2);
}

/** A database file's records (its license header, indented, left out), each file read once. */
const read = new Map<string, string[]>();
const lines = (file: string) => {
  if (!read.has(file)) read.set(file, readFileSync(join(dir, file), 'latin1').split('\n').filter((line) => line && !line.startsWith('  ')));
  return read.get(file)!;
};
const byWord = new Map<string, string[]>();
const add = (word: string, synonym: string) => {
  if (synonym === word || !PHRASE.test(synonym)) return;
  const list = byWord.get(word) ?? [];
  if (!list.includes(synonym)) list.push(synonym);
  byWord.set(word, list);
};

for (const pos of ['noun', 'verb']) {
  // data.<pos>: "offset lex_filenum ss_type w_cnt(hex) word lex_id word lex_id … pointers | gloss".
  const synsets = new Map<string, string[]>();
  for (const line of lines(`data.${pos}`)) {
    const f = line.split(' ');
    const words: string[] = [];
    for (let i = 0; i < Number.parseInt(f[3]!, 16); i++) words.push(f[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase().replace(/[_-]/g, ' '));
    synsets.set(f[0]!, words);
  }
  // index.<pos>: "lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt offset…", senses most frequent first.
  for (const line of lines(`index.${pos}`)) {
    const f = line.split(' ').filter(Boolean);
    if (!WORD.test(f[0]!)) continue;
    const senses = Number(f[2]);
    for (const offset of f.slice(f.length - senses, f.length - senses + SENSES)) for (const word of synsets.get(offset) ?? []) add(f[0]!, word);
  }
}
for (const pos of ['noun', 'verb']) {
  // <pos>.exc: "irregular_form base_form…".
  for (const line of lines(`${pos}.exc`)) {
    const [form, ...bases] = line.split(' ').filter(Boolean);
    if (!WORD.test(form!) || byWord.has(form!)) continue;
    for (const base of bases) {
      add(form!, base);
      for (const synonym of byWord.get(base) ?? []) add(form!, synonym);
    }
  }
}

// Every other word WordNet knows, adjectives and adverbs and their irregular forms too, with no
// synonyms: search asks whether a word is English before it takes it for a misspelling.
for (const pos of ['noun', 'verb', 'adj', 'adv']) {
  for (const file of [`index.${pos}`, `${pos}.exc`]) {
    for (const line of lines(file)) {
      const word = line.slice(0, line.indexOf(' '));
      if (WORD.test(word) && !byWord.has(word)) byWord.set(word, []);
    }
  }
}

const out = [...byWord].map(([word, synonyms]) => `${word}\t${synonyms.join('|')}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
writeFileSync(join(import.meta.dirname, '../src/knowledge/search/wordnet-synonyms.txt'), `${out.join('\n')}\n`);
console.log(`${out.length} words`);
