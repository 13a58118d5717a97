import { DEFINITION, isDefinitionTerm } from '../../knowledge/types.js';
import { clipText } from '../../lib/nul.js';

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

/** A sentence of a passage and the line it is on (list items and headings are lines of their own). */
export interface Sentence {
  text: string;
  /** Index of its line in the passage. */
  line: number;
  /** It is on a numbered list item's line ("1. …", "2) …"): a step of a procedure. */
  step: boolean;
  /** It is a table row, read with its header ("Zone: 2; Express: €14.95"). */
  row: boolean;
  /** Index of its block: blank lines separate the blocks (paragraphs, lists, tables) of a passage. */
  block: number;
  /**
   * It is the term of a definition-list entry, the line above a ": description" line (see
   * extract.ts's definitionBlocks); the entry runs from it to the next term.
   */
  term: boolean;
  /** It is on a list item's line ("- …", "* …"), whose marker is not part of its text. */
  item: boolean;
}

const cellsOf = (line: string) => line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
const isTableLine = (line: string) => /^\s*\|.*\|\s*$/.test(line);
const isSeparator = (line: string) => /^\s*\|(\s*:?-{3,}:?\s*\|)+\s*$/.test(line);

/**
 * A table's data row as one sentence that names each value's column, so a row can be quoted and
 * read on its own: "Zone: 2; Countries: Belgium, Germany; Express: €14.95."
 */
function rowSentence(header: string[], line: string): string {
  const cells = cellsOf(line);
  const parts = cells.flatMap((cell, i) => (cell ? [header[i] ? `${header[i]}: ${cell}` : cell] : []));
  const text = parts.join('; ');
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * What starts a line without being part of its words: a list bullet or a quote's angle bracket,
 * followed by a space. A run of dashes is not one ("-- comment" is an SQL comment, "--table" an
 * option), nor is a hash: headings are not in a passage's text, so "# …" is a code comment.
 */
const LINE_MARKER = /^\s*[-*•+>]\s+/;

/**
 * Splits a passage into sentences, keeping list items and headings as their own lines. A table
 * with a header row gives one sentence per data row, each value named by its column; the header
 * and separator lines give none.
 */
export function sentenceLines(text: string): Sentence[] {
  const lines: string[] = [];
  const blocks: number[] = [];
  let block = 0;
  for (const line of text.split('\n')) {
    if (line.trim()) {
      lines.push(line);
      blocks.push(block);
    } else if (lines.length > 0 && blocks.at(-1) === block) block++;
  }
  let header: string[] | null = null;
  return lines.flatMap((line, i): Sentence[] => {
    const at = { line: i, block: blocks[i]!, term: false, item: false };
    if (isTableLine(line)) {
      if (isSeparator(line)) return [];
      if (i + 1 < lines.length && isSeparator(lines[i + 1]!)) {
        header = cellsOf(line);
        return [];
      }
      if (header) return [{ text: rowSentence(header, line), step: false, row: true, ...at }];
    } else header = null;
    if (isDefinitionTerm(lines, i)) {
      return [{ text: line.trim(), step: false, row: false, ...at, term: true }];
    }
    // A step's number stays with its first sentence ("3. Print the label."), not a sentence of its own;
    // so does a year that starts a line ("2024. We moved"), which is no step.
    const number = /^\s*(\d+[.)])\s+/.exec(line);
    const marker = number ? null : (LINE_MARKER.exec(line) ?? DEFINITION.exec(line));
    const body = number ? line.slice(number[0].length) : marker ? line.slice(marker[0].length) : line;
    const item = marker !== null && /^\s*[-*•+]/.test(marker[0]);
    return body
      .split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}"“(])/u)
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s, k) => ({ text: number && k === 0 ? `${number[1]} ${s}` : s, step: number !== null && number[1]!.length <= 4, row: false, ...at, item }));
  });
}

/** Cuts `text` at a word boundary so it is at most `max` characters, adding "…" when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = clipText(text, max - 1);
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
