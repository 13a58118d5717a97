import { describe, expect, it } from 'vitest';
import { keywords } from '../agent/builtin/text.js';
import { groupQuestions, termsOfEach } from './question-groups.js';

const termsOf = (text: string) => [...new Set(keywords(text))];

describe('grouping questions', () => {
  it('groups the questions that share most of their key terms, the first one asked leading', () => {
    const groups = groupQuestions(['Do you offer gift wrapping?', 'Do you ship to Norway?', 'Can I get my order gift wrapped?', 'thanks!'], (q) => q, termsOf);
    expect(groups.map((g) => g.members)).toEqual([['Do you offer gift wrapping?', 'Can I get my order gift wrapped?'], ['Do you ship to Norway?']]);
  });

  it('reads the terms of many messages ahead, each once, letting other work run in between', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `Where is parcel ${i % 150}?`);
    let otherWorkRan = false;
    setImmediate(() => void (otherWorkRan = true));
    const readWhileOtherWorkRan: boolean[] = [];
    let reads = 0;
    const lookup = await termsOfEach(texts, (text) => {
      reads++;
      readWhileOtherWorkRan.push(otherWorkRan);
      return termsOf(text);
    });
    // Each distinct text read once; the event loop got its turn before the last were read.
    expect(reads).toBe(150);
    expect(readWhileOtherWorkRan[0]).toBe(false);
    expect(readWhileOtherWorkRan.at(-1)).toBe(true);
    expect(lookup('Where is parcel 7?')).toEqual(termsOf('Where is parcel 7?'));
  });
});
