import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMPTY_LEXICON, queryGroups, respelled } from './search/lexicon.js';
import { isQueryStopword } from './search/query.js';
import { groupWeight } from './search/rerank.js';
import { stem, writtenAsNames } from './search/terms.js';
import { isEnglishWord, wordnetSynonyms } from './search/wordnet.js';

describe('WordNet synonyms', () => {
  it('is a sorted table of words with one- or two-word synonyms, which the lookup relies on', () => {
    const lines = readFileSync(new URL('./search/wordnet-synonyms.txt', import.meta.url), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(40_000);
    const word = (line: string) => line.slice(0, line.indexOf('\t'));
    expect(lines.filter((line) => !/^[a-z]+\t([a-z]+( [a-z]+)?(\|[a-z]+( [a-z]+)?)*)?$/.test(line))).toEqual([]);
    expect(lines.filter((line, i) => i > 0 && word(line) <= word(lines[i - 1]!))).toEqual([]);
  });

  it("looks a word up as WordNet's morphy does, never by the search's crude stem", () => {
    expect(wordnetSynonyms('xmas')).toContainEqual(['christmas']);
    expect(wordnetSynonyms('purchase')).toEqual([['buy']]);
    // Regular inflections are cut to the base form; irregular ones are in the table.
    expect(wordnetSynonyms('purchases')).toEqual([['buy']]);
    expect(wordnetSynonyms('purchased')).toEqual([['buy']]);
    expect(wordnetSynonyms('bought')).toContainEqual(['purchase']);
    // "mars" is a word of its own; stemmed, it would be the verb "mar" (spoil, impair).
    expect(wordnetSynonyms('mars')).toEqual([['red', 'planet']]);
    expect(wordnetSynonyms('qwertyuiop')).toEqual([]);
    expect(wordnetSynonyms('')).toEqual([]);
  });

  it("brings in WordNet's synonyms the content uses, only for a word the content never uses and no everyday set has", () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map([['christma', 2], ['sale', 3], ['buy', 2], ['parcel', 1]]) };
    expect(queryGroups('xmas sale', lexicon, isQueryStopword)).toEqual([[['xmas'], ['christmas']], [['sale']]]);
    // The content's own word is not widened.
    expect(queryGroups('christmas sale', lexicon, isQueryStopword)).toEqual([[['christmas']], [['sale']]]);
    // An everyday set comes first: "package" is one ("parcel"), so WordNet is not asked.
    expect(queryGroups('package', lexicon, isQueryStopword)).toEqual([[['package'], ['parcel']]]);
    // Synonyms the content does not use are left out.
    expect(queryGroups('mars', lexicon, isQueryStopword)).toEqual([[['mars']]]);
  });

  it('tells English words, inflected too, from names and misspellings', () => {
    expect(['password', 'passwords', 'shipped', 'faster', 'quickly', 'teammate', 'bought'].filter((w) => !isEnglishWord(w))).toEqual([]);
    expect(['pasword', 'recieve', 'litestream', 'pgbouncer', 'bcrypt'].filter(isEnglishWord)).toEqual([]);
    // "-es" is cut to nothing only after an "o" or a hissing sound: "typees" is no form of "type".
    expect(['boxes', 'goes', 'echoes', 'types', 'wishes', 'typed', 'typing'].filter((w) => !isEnglishWord(w))).toEqual([]);
    expect(['typees', 'moodes', 'tablees'].filter(isEnglishWord)).toEqual([]);
    // An adjective listed without synonyms of its own still finds its verb's ("jumping" → jump).
    expect(wordnetSynonyms('jumping')).toContainEqual(['leap']);
  });

  it("reads a misspelling as the content's word one edit away, never a name or an English word", () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['password', 'receive', 'refund', 'scrypt', 'parcel', 'order', 'table'].map((w) => [stem(w), 2])) };
    expect(['pasword', 'recieve', 'refnud', 'passsword', 'parcl', 'ordre', 'tabel'].map((w) => respelled(w, lexicon))).toEqual(['password', 'receive', 'refund', 'password', 'parcel', 'order', 'table']);
    // Not a first letter ("bcrypt" is no misspelling of "scrypt"), not a word under four letters,
    // not an English word the content lacks, not two edits away.
    expect(['bcrypt', 'ord', 'teammate', 'paswrd'].map((w) => respelled(w, lexicon))).toEqual([null, null, null, null]);
    expect(queryGroups('pasword reset', lexicon, isQueryStopword)).toEqual([[['pasword'], ['password']], [['reset']]]);
  });

  it('reads a name only as a misspelling within it, never by its last letter', () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['json', 'sqlite', 'norway', 'function'].map((w) => [stem(w), 2])) };
    // "JSONB" is another thing than JSON; "SQLiite" and "Noray" are misspelt names.
    expect(queryGroups('How do I use JSONB functions?', lexicon, isQueryStopword)).toEqual([[['use']], [['jsonb']], [['functions']]]);
    expect(queryGroups('Does SQLiite ship to Noray?', lexicon, isQueryStopword)).toEqual([[['sqliite'], ['sqlite']], [['ship']], [['noray'], ['norway']]]);
    // Written in lower case, it is read as any word is, unless the message spells that word too.
    expect(queryGroups('how do i use jsonb', lexicon, isQueryStopword)).toEqual([[['use']], [['jsonb'], ['json']]]);
    expect(queryGroups('how do i use jsonb to store json', lexicon, isQueryStopword)).toEqual([[['use']], [['jsonb']], [['store']], [['json']]]);
    // A slip inside a word is one still, though the message spells the word right elsewhere.
    expect(queryGroups('sqlite fnuction or function', lexicon, isQueryStopword)).toEqual([[['sqlite']], [['fnuction'], ['function']], [['function']]]);
    expect(writtenAsNames('Can I pay with Venmo? Pruce of NVMe. JSONB\nKlarna')).toEqual(new Set(['i', 'venmo', 'nvme', 'jsonb']));
  });

  it('leaves a misspelt stopword out, as the word it stands for', () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['return', 'copy', 'psql'].map((w) => [stem(w), 2])) };
    expect(queryGroups('How long do I have to return somthing?', lexicon, isQueryStopword)).toEqual([[['return']]]);
    expect(queryGroups('the differnce betwen copy and psql', lexicon, isQueryStopword)).toEqual([[['copy']], [['psql']]]);
    // Not a name.
    expect(queryGroups('we met Betwen', lexicon, isQueryStopword)).toEqual([[['met']], [['betwen']]]);
  });

  it('weighs a misspelling as the word it was taken for', () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['password', 'reset'].map((w) => [stem(w), 2])) };
    const [typo] = queryGroups('pasword', lexicon, isQueryStopword);
    const [word] = queryGroups('password', lexicon, isQueryStopword);
    expect(groupWeight(lexicon, typo!)).toBe(groupWeight(lexicon, word!));
    // A word no one knows, with nothing it could be a misspelling of, still weighs the most.
    expect(groupWeight(lexicon, [['qzxv']])).toBeGreaterThan(groupWeight(lexicon, word!));
  });
});
