import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMPTY_LEXICON, queryGroups } from './search/lexicon.js';
import { isQueryStopword } from './search/query.js';
import { wordnetSynonyms } from './search/wordnet.js';

describe('WordNet synonyms', () => {
  it('is a sorted table of words with one- or two-word synonyms, which the lookup relies on', () => {
    const lines = readFileSync(new URL('./search/wordnet-synonyms.txt', import.meta.url), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(40_000);
    const word = (line: string) => line.slice(0, line.indexOf('\t'));
    expect(lines.filter((line) => !/^[a-z]+\t[a-z]+( [a-z]+)?(\|[a-z]+( [a-z]+)?)*$/.test(line))).toEqual([]);
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
});
