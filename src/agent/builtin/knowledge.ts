import { KNOWLEDGE_TOOL } from '../../knowledge/tool.js';
import { HANDOFF_TOOL } from '../handoff-tool.js';
import { THEMATIC_BREAK, type KnowledgeHit } from '../../knowledge/types.js';
import { distinctSources, readHits, type CitedSource } from '../sources.js';
import { isActionTool } from './actions.js';
import { statesFact, wantedFact, type Fact } from './fact.js';
import { clip, humanize, keywords, sentenceLines, type Sentence } from './text.js';
import type { BuiltinDecision, BuiltinTurn } from './types.js';

/**
 * Without the tool's own judgement (an older output), a passage must cover at least this share of
 * the question's keywords to be used.
 */
const MIN_COVERAGE = 0.3;
/** At most this many passages (distinct sources) go into one answer. */
const MAX_PASSAGES = 2;
/** A second passage only when it covers the question nearly as well as the first. */
const SECOND_PASSAGE_SHARE = 0.9;
/** Characters taken from one passage. */
const MAX_PASSAGE_CHARS = 480;
/**
 * What stating the kind of fact the question asks for ("how long…": a length of time) adds to a
 * sentence's coverage of the question (0..1), when the sentence names any of its terms.
 */
const FACT_BONUS = 0.25;

export const DONT_KNOW =
  "I'm sorry, I couldn't find anything about that in our help content, so I'd rather not guess. " +
  'Could you rephrase the question, or ask about something else?';

/**
 * The knowledge part of the builtin model: searches once per question when the knowledge tool is
 * offered, then answers from the passages that really match, citing them as [n].
 */
export function knowledgeSkill(turn: BuiltinTurn): BuiltinDecision | null {
  const done = turn.outcomes.filter((o) => o.toolName === KNOWLEDGE_TOOL);
  if (done.length > 0) {
    const last = done[done.length - 1];
    if (last.isError) return { kind: 'answer', text: "I'm sorry, I couldn't search our help content just now. Please try again in a moment.", declined: true };
    const answer = answerFromHits(turn.question, readHits(last.output), readTerms(last.output));
    if (answer.sources.length > 0) return { kind: 'answer', ...answer };
    return { kind: 'answer', text: `${DONT_KNOW}${offer(turn)}`, declined: true };
  }
  if (turn.outcomes.length > 0) return null;
  if (!turn.tools.some((t) => t.name === KNOWLEDGE_TOOL)) return null;
  const query = searchQuery(turn);
  if (!query) return null;
  return { kind: 'call', toolName: KNOWLEDGE_TOOL, input: { query } };
}

/**
 * The question itself; a short follow-up ("and the price?") is searched together with the user's
 * previous message, which names what it is about.
 */
export function searchQuery(turn: BuiltinTurn): string {
  const question = turn.question.trim();
  if (keywords(question).length === 0) return '';
  const previous = turn.userTexts.length > 1 ? turn.userTexts[turn.userTexts.length - 2] : '';
  if (keywords(question).length < 2 && previous) return clip(`${previous} ${question}`, 500);
  return clip(question, 500);
}

/**
 * What else the assistant can do: the project's skills by the names the team gave them, else the
 * actions it was offered by name, and a person when handoff is on. Names are listed as written
 * ("Track an order"), which reads right whatever they say.
 */
function offer(turn: BuiltinTurn): string {
  const actions = turn.tools.filter((t) => isActionTool(t.name)).map((t) => capitalize(humanize(t.name)));
  const things = (turn.skills?.length ? turn.skills : actions).slice(0, MAX_OFFERED).map((t) => t.replace(/[.!?:;]+$/, ''));
  // The person is offered in plain words: "request handoff" is a tool's name, not an offer.
  const person = turn.tools.some((t) => t.name === HANDOFF_TOOL) ? ' I can also put you in touch with a person.' : '';
  return things.length > 0 ? ` Other things I can help with: ${things.join('; ')}.${person}` : person;
}

/** Skills or actions named in a decline: enough to show the way, few enough to read. */
const MAX_OFFERED = 4;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A term of the question as the search weighed it: its forms (alternatives) as keyword lists, and its weight. */
interface WeightedTerm {
  forms: string[][];
  weight: number;
}

/** The weighted terms the knowledge tool reports with its results, or [] from an older output. */
export function readTerms(output: unknown): WeightedTerm[] {
  const terms = (output as { terms?: unknown } | null)?.terms;
  if (!Array.isArray(terms)) return [];
  return terms.flatMap((t) => {
    const forms = Array.isArray(t?.forms) ? t.forms.filter((f: unknown): f is string => typeof f === 'string') : [];
    const weight = typeof t?.weight === 'number' ? t.weight : 0;
    const kw = forms.map((f: string) => keywords(f)).filter((k: string[]) => k.length > 0);
    return kw.length > 0 && weight > 0 ? [{ forms: kw, weight }] : [];
  });
}

/**
 * A text's keywords for matching the search's terms: a word joined by hyphens or an apostrophe
 * ("force-with-lease", "doesn't") also as its parts, as the search splits the question's words
 * ("--force-with-lease" is searched as "force" and "lease").
 */
function termKeys(text: string): Set<string> {
  const joined = keywords(text);
  return new Set(joined.some((w) => /['’-]/.test(w)) ? [...joined, ...keywords(text.replace(/['’-]/g, ' '))] : joined);
}

/** Weighted share of the terms that a text's keywords hold (a term is held when any form is). */
function weightedCoverage(terms: WeightedTerm[], text: Set<string>): number {
  const total = terms.reduce((s, t) => s + t.weight, 0);
  if (total === 0) return 0;
  const held = terms.filter((t) => t.forms.some((f) => f.every((w) => text.has(w)))).reduce((s, t) => s + t.weight, 0);
  return held / total;
}

/**
 * Composes a cited answer from the hits, or says plainly that nothing matched. The knowledge tool
 * hands over only passages that cover the question, best first, with the question's terms weighed
 * by rarity; the answer leads with the best source and quotes, of its passages, the one whose
 * sentences cover those terms best (and one more that covers them exactly as well). Only the
 * sources the answer quotes are cited, numbered in the order they are quoted.
 */
export function answerFromHits(question: string, hits: KnowledgeHit[], weighted: WeightedTerm[] = []): { text: string; sources: CitedSource[] } {
  const asked = keywords(question);
  const terms: WeightedTerm[] = weighted.length > 0 ? weighted : [...new Set(asked)].map((k) => ({ forms: [[k]], weight: 1 }));
  const sources = distinctSources(hits);
  const scored = hits
    .map((hit) => ({ hit, coverage: weightedCoverage(terms, termKeys(`${hit.title} ${hit.headingPath.join(' ')} ${hit.text}`)) }))
    .filter((s) => weighted.length > 0 || s.coverage >= MIN_COVERAGE);
  if (scored.length === 0) return { text: DONT_KNOW, sources: [] };

  const lead = scored[0]!;
  const procedure = asksHow(question);
  const fact = wantedFact(question);
  // Each source once, in the order the search ranked it; a source's passages (chunks) compete on
  // the sentence they would quote, since the first chunk of a page to hold the question's words is
  // often not the one whose sentence answers it.
  const bySource = new Map<string, Array<{ excerpt: string; sentence: string; score: number; deprecated: boolean }>>();
  // A section marked deprecated ("Stability: 0 - Deprecated: Use fs.stat() or fs.access() instead.")
  // is quoted only when no other passage of its page has something to say: its later chunks, which
  // do not repeat the mark, share its heading path.
  const deprecated = new Set(scored.filter((s) => DEPRECATED.test(s.hit.text)).map((s) => sectionOf(s.hit)));
  for (const s of scored) {
    if (s.hit !== lead.hit && s.coverage < lead.coverage * SECOND_PASSAGE_SHARE) continue;
    const found = bestExcerpt(terms, s.hit.text, procedure, fact);
    if (!found) continue;
    const excerpt = { ...found, excerpt: named(s.hit.headingPath.at(-1), found.excerpt), deprecated: deprecated.has(sectionOf(s.hit)) };
    const list = bySource.get(s.hit.sourceId) ?? [];
    list.push(excerpt);
    bySource.set(s.hit.sourceId, list);
  }
  const cited: CitedSource[] = [];
  const paragraphs: string[] = [];
  for (const [sourceId, excerpts] of bySource) {
    if (cited.length >= MAX_PASSAGES) break;
    // Ties keep the search's order.
    const current = excerpts.filter((e) => !e.deprecated);
    const candidates = current.length > 0 ? current : excerpts;
    const best = candidates.reduce((a, b) => (b.score > a.score ? b : a));
    cited.push(sources.find((src) => src.sourceId === sourceId)!);
    paragraphs.push(`${best.excerpt} [${cited.length}]`);
    // Another passage of the leading source whose sentence covers the question exactly as well is
    // quoted after it: nothing tells which of the two answers, and the search's order is no guide
    // ("turn a callback-style function into one that returns a promise" names the same words in
    // util.callbackify's entry, first, and in util.promisify's, which answers).
    // Chunks overlap, so the same sentence can win in two of them: a passage whose sentence is already
    // quoted (or was, before a long excerpt was cut short) is not quoted again.
    const tied = cited.length === 1 ? candidates.find((e) => e !== best && e.score === best.score && e.sentence !== best.sentence && !best.excerpt.includes(e.sentence)) : undefined;
    if (tied) paragraphs.push(`${tied.excerpt} [1]`);
  }
  if (paragraphs.length === 0) return { text: DONT_KNOW, sources: [] };
  return { text: paragraphs.join('\n\n'), sources: cited };
}

/** A passage's section, as a key: its source and heading path. */
const sectionOf = (hit: KnowledgeHit) => `${hit.sourceId}\u0000${hit.headingPath.join('\u0000')}`;

/** The mark of a deprecated section in an API reference (Node.js's stability index 0). */
const DEPRECATED = /\bStability: 0 - Deprecated\b/;

/**
 * A section heading that names an API rather than a topic: a signature ("util.promisify(original)",
 * "request.setTimeout(timeout[, callback])"), a property ("process.env"), an option
 * ("--max-old-space-size=SIZE"), an error code ("ERR_REQUIRE_ESM"), a class or an event
 * ("Class: zlib.Gzip", "Event: 'timeout'"). One word or signature, no spaces outside its brackets.
 */
export function namesApi(heading: string): boolean {
  const bare = heading.replace(/\(.*\)$/, '()').replace(/^(?:Class|Event|Static method):\s+/, '');
  return /^['"]?[\w$.\-[\]]+(?:\(\))?(?:=\S+)?['"]?$/.test(bare) && (/[.(=_]|^--/.test(bare) || bare !== heading.replace(/\(.*\)$/, '()'));
}

/**
 * An excerpt of a reference section, led by the section's heading when that names the API it
 * describes: the description ("Takes a function following the common error-first callback
 * style…") rarely names it, and the name is what the reader needs.
 */
function named(heading: string | undefined, excerpt: string): string {
  if (!heading || !namesApi(heading) || excerpt.includes(heading.replace(/\(.*$/, ''))) return excerpt;
  return `${heading}${heading.includes(':') ? ' —' : ':'} ${excerpt}`;
}

/**
 * A line that reads as code or a command rather than prose (a shell command, JSON, a path list).
 * Quoted into a chat answer it loses its layout and reads as noise, so excerpts prefer prose.
 */
export function looksLikeCode(sentence: string): boolean {
  if (/^(curl|npm|npx|export|cd|git|docker|node|ollama)\s/.test(sentence)) return true;
  // A comment line of SQL ("-- …"), C-like languages ("// …") or a shell ("# …").
  if (/^(--|\/\/|#)(\s|$)/.test(sentence)) return true;
  // A block's header in Python ("and sum(c.isdigit() for c in password) >= 3):", "for x in
  // items[1:]:"), unless it reads as a sentence introducing a list, and an interactive session's
  // prompt (">>> json.dumps(obj)", "... break").
  if (/^(>>>|\.\.\.)\s/.test(sentence) || (/[)\]]:$/.test(sentence) && !readsAsProse(sentence))) return true;
  if (/\b[A-Z][A-Z0-9_]{3,}=\S|\s-[A-Za-z]\s+["'$]|[{}]\s*["}]/.test(sentence)) return true;
  // A variable's value ("$GIT_DIR/info/exclude"), unless a sentence of prose names it: manuals
  // write where a file lives that way ("… should go into the $GIT_DIR/info/exclude file.").
  if (/\$[A-Z_]{2,}/.test(sentence) && !readsAsProse(sentence)) return true;
  // An arrow or an "or" operator is code, unless it sits in a sentence of prose: API references
  // name them inline ("taking an (err, value) => ... callback as the last argument").
  if (/=>|\|\|/.test(sentence) && !readsAsProse(sentence)) return true;
  const symbols = sentence.replace(/[\p{L}\p{N}\s.,;:'’()?!-]/gu, '').length;
  return symbols / Math.max(1, sentence.length) > 0.12;
}

/** A sentence of prose: it starts with a capitalized word, ends like a sentence and has at least eight words. */
function readsAsProse(sentence: string): boolean {
  return /^[\p{Lu}][\p{Ll}’']*\s/u.test(sentence) && /[.!?:]$/.test(sentence) && (sentence.match(/\p{L}{2,}/gu)?.length ?? 0) >= 8;
}

/** A table row or a line of a table layout: quoted into a chat answer it reads as noise. */
function looksLikeTableRow(sentence: string): boolean {
  // Columns laid out with runs of spaces, as a command's help output is (".recover     Recover …").
  return (sentence.match(/\|/g)?.length ?? 0) >= 2 || /\t|\S {4,}\S/.test(sentence);
}

/**
 * Whether a question asks how to do something ("how do I…", "how can we…", "how to…"), which a
 * procedure answers from its first step; "how many", "how long" and the like ask for a fact.
 */
export function asksHow(question: string): boolean {
  return /\bhow\b(?!\s+(?:many|much|long|often|big|large|small|fast|slow|old|far|soon|late|early)\b)/i.test(question);
}

/**
 * Where an excerpt around the sentence `best` starts: at the sentence itself, or, when it is a step
 * of a numbered procedure, at the procedure's first step (and the line introducing it, when that line
 * ends with a colon), so "how do I…" gets the steps from the start rather than from the one that
 * happens to name the question's words. Only when all of that fits in `room` characters.
 */
function excerptStart(list: Sentence[], prose: boolean[], best: number, room: number): number {
  if (!list[best]!.step) return best;
  let start = best;
  while (start > 0 && prose[start - 1] && list[start - 1]!.step && list[start - 1]!.line >= list[start]!.line - 1) start--;
  const intro = start - 1;
  if (intro >= 0 && prose[intro] && !list[intro]!.step && list[intro]!.text.endsWith(':')) start = intro;
  const length = list.slice(start, best + 1).reduce((n, s) => n + s.text.length + 1, 0);
  return length <= room ? start : best;
}

/** A thematic break's line: the end of one entry of a reference page, or of one topic. */
const isBreak = (s: Sentence) => s.text === THEMATIC_BREAK;

/**
 * Where the passage's unit that holds sentence `i` ends: the next definition-list term starts
 * another, and a thematic break ends it.
 */
function nextTerm(list: Sentence[], i: number): number {
  let j = i + 1;
  while (j < list.length && !list[j]!.term && !isBreak(list[j]!)) j++;
  return j;
}

/**
 * What a sentence ending with a colon introduces: the rest of its block, or the next block when it
 * ends its own ("…as follows:" above a list or a code sample). Empty when nothing follows it.
 */
function introduced(list: Sentence[], intro: number): number[] {
  const next = list[intro + 1];
  if (!next || next.term || isBreak(next)) return [];
  const block = next.block;
  const out: number[] = [];
  for (let j = intro + 1; j < list.length && list[j]!.block === block && !list[j]!.term && !isBreak(list[j]!); j++) out.push(j);
  return out;
}

/**
 * A sentence as it joins the excerpt after the one before it: a step, a list item or a line of what
 * an introduction introduces (`ownLine`) on a line of its own, a description after its term's colon.
 */
function joined(list: Sentence[], i: number, ownLine: boolean): string {
  const s = list[i]!;
  const previous = list[i - 1]!;
  if (s.line !== previous.line && (ownLine || s.step || s.item)) return `\n${s.item ? `- ${s.text}` : s.text}`;
  return previous.term ? `: ${s.text}` : ` ${s.text}`;
}

/**
 * The sentence that covers the question best (its terms weighed by rarity; one that states the kind
 * of fact the question asks for, such as a length of time for "how long…", counts FACT_BONUS more), with the sentences
 * that follow it while they fit: the answer to "how do I…" usually continues after the sentence
 * that names the topic; a step of a numbered procedure is quoted with the steps before it, and a
 * table row alone, its values named by their columns. Prose wins over code, commands and table
 * lines without a header; the excerpt stops where they start. Steps keep their lines. A
 * definition-list entry is quoted as a unit: from its term (when that fits), never into the next
 * term. The excerpt does not end on a line that introduces what follows ("…as follows:"): what it
 * introduces is quoted with it when it fits, else the excerpt stops before it. Returns the excerpt
 * with the sentence that won and its score; null when the passage has nothing to quote.
 */
function bestExcerpt(terms: WeightedTerm[], text: string, procedure: boolean, fact: Fact | null = null): { excerpt: string; sentence: string; score: number } | null {
  const list = sentenceLines(text);
  if (list.length === 0) return null;
  const prose = list.map((s) => (s.row || (!looksLikeCode(s.text) && !looksLikeTableRow(s.text))) && (s.step || keywords(s.text).length >= 3));
  if (!prose.some(Boolean)) return null;
  let best = -1;
  let bestScore = -1;
  // A sentence of a definition-list entry is about the entry's term: it reads with the term's words
  // ("The default is typically 128 megabytes" under "shared_buffers (integer)"), up to the next term
  // or a thematic break, which end the entry. The text does not mark where a list ends, so a
  // paragraph after it in the same chunk reads with the last entry's words, as it is quoted with
  // that entry (nextTerm).
  let entry: string[] = [];
  list.forEach((s, i) => {
    if (s.term) entry = [...termKeys(s.text)];
    else if (isBreak(s)) entry = [];
    if (!prose[i]) return;
    const covered = weightedCoverage(terms, new Set([...termKeys(s.text), ...entry]));
    const score = covered + (fact && covered > 0 && statesFact(fact, s.text) ? FACT_BONUS : 0);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  let start = procedure ? excerptStart(list, prose, best, MAX_PASSAGE_CHARS) : best;
  // The first paragraph of a description is quoted with its term, which names what it describes.
  const back = list.slice(0, best).reverse().findIndex((s) => s.term);
  const term = best - 1 - back;
  if (start === best && back >= 0 && list[term + 1]!.block === list[best]!.block) {
    const length = list.slice(term, best + 1).reduce((n, s) => n + s.text.length + 2, 0);
    if (length <= MAX_PASSAGE_CHARS) start = term;
  }
  const end = nextTerm(list, best);
  const taken = [start];
  let length = list[start]!.text.length;
  for (let i = start + 1; i < end && (prose[i] || i <= best); i++) {
    const s = list[i]!;
    // A table row answers on its own; the rows after it are other cases.
    if (i > best && s.row) break;
    if (i > best && length + s.text.length + 1 > MAX_PASSAGE_CHARS) break;
    taken.push(i);
    length += s.text.length + 1;
  }
  // An introduction ("…as follows:") is quoted with all it introduces when that fits, or when it is
  // the sentence that answers; else the excerpt stops before it, rather than end on it or cut its list.
  const lines = new Set<number>();
  const intro = taken.findIndex((i) => i >= best && list[i]!.text.endsWith(':') && introduced(list, i).some((r) => !taken.includes(r)));
  if (intro >= 0) {
    const rest = introduced(list, taken[intro]!);
    taken.length = intro + 1;
    const size = [...taken, ...rest].reduce((n, i) => n + list[i]!.text.length + 3, 0);
    if (taken[intro] === best || size <= MAX_PASSAGE_CHARS) {
      for (const i of rest) lines.add(i);
      taken.push(...rest);
    } else taken.length = intro;
  }
  const first = list[start]!;
  // A list quoted from its first item shows that item's bullet too.
  const listed = first.item && list[start - 1]?.line !== first.line && taken.some((i) => i !== start && list[i]!.item);
  const out = taken.map((i, k) => (k > 0 ? joined(list, i, lines.has(i)) : listed ? `- ${first.text}` : first.text)).join('');
  return { excerpt: clip(out, MAX_PASSAGE_CHARS), sentence: list[best]!.text, score: bestScore };
}
