import { seededRandom, seedOf } from './random.js';

/**
 * Misspellings of the kind fast typists make, for measuring how answers hold up against them
 * (BENCH_QUALITY_TYPOS): in `count` words of five letters or more, one letter left out, doubled,
 * swapped with the next, or hit beside on the keyboard, never the first. Seeded by the text, so
 * every run and every machine gets the same misspellings.
 */

const ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
/** Words left as they are: misspelling them says nothing about the search. */
const SKIP = new Set('about there their which where would could should these those what when does have with from that this into your'.split(' '));

function beside(letter: string, pick: (n: number) => number): string {
  const lower = letter.toLowerCase();
  const row = ROWS.find((r) => r.includes(lower));
  if (!row) return letter;
  const i = row.indexOf(lower);
  const near = [row[i - 1], row[i + 1]].filter((c): c is string => c !== undefined);
  const c = near[pick(near.length)]!;
  return letter === lower ? c : c.toUpperCase();
}

function misspell(word: string, pick: (n: number) => number): string {
  const i = 1 + pick(word.length - 2);
  switch (pick(4)) {
    case 0:
      return word.slice(0, i) + word.slice(i + 1);
    case 1:
      return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    case 2:
      return word.slice(0, i) + beside(word[i]!, pick) + word.slice(i + 1);
    default:
      return word.slice(0, i) + word[i] + word.slice(i);
  }
}

/** The text with `count` of its words misspelt (fewer when it has fewer long words), seeded by `seed`. */
export function withTypos(text: string, count: number, seed: string): string {
  const next = seededRandom(seedOf(`${seed}:${count}`));
  const pick = (n: number) => Math.floor(next() * n);
  const words = [...text.matchAll(/\p{L}{5,}/gu)].filter((m) => !SKIP.has(m[0].toLowerCase()));
  // A seeded shuffle of the long words' places; the first `count` are misspelt.
  const order = words.map((_, k) => k);
  for (let k = order.length - 1; k > 0; k--) {
    const j = pick(k + 1);
    [order[k], order[j]] = [order[j]!, order[k]!];
  }
  let out = text;
  // From the end, so earlier words keep their offsets.
  for (const k of order.slice(0, count).sort((a, b) => b - a)) {
    const m = words[k]!;
    out = out.slice(0, m.index) + misspell(m[0], pick) + out.slice(m.index + m[0].length);
  }
  return out;
}
