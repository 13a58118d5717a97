import { KNOWLEDGE_TOOL } from '../../knowledge/tool.js';
import type { KnowledgeHit } from '../../knowledge/types.js';
import { distinctSources, readHits, type CitedSource } from '../sources.js';
import { clip, coverage, keywords, sentences } from './text.js';
import type { BuiltinDecision, BuiltinTurn } from './types.js';

/** A passage must cover at least this share of the question's keywords to be used. */
const MIN_COVERAGE = 0.3;
/** At most this many passages (distinct sources) go into one answer. */
const MAX_PASSAGES = 2;
/** Characters taken from one passage. */
const MAX_PASSAGE_CHARS = 480;

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
    const answer = answerFromHits(turn.question, readHits(last.output));
    return { kind: 'answer', ...answer, declined: answer.sources.length === 0 };
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

interface Scored {
  hit: KnowledgeHit;
  coverage: number;
}

/**
 * Composes a cited answer from the hits, or says plainly that nothing matched. Only the sources the
 * answer quotes are cited, numbered in the order they are quoted.
 */
export function answerFromHits(question: string, hits: KnowledgeHit[]): { text: string; sources: CitedSource[] } {
  const asked = keywords(question);
  const sources = distinctSources(hits);
  const scored: Scored[] = hits
    .map((hit) => ({ hit, coverage: coverage(asked, keywords(`${hit.title} ${hit.headingPath.join(' ')} ${hit.text}`)) }))
    .filter((s) => s.coverage >= MIN_COVERAGE);
  if (scored.length === 0) return { text: DONT_KNOW, sources: [] };

  const used = new Set<string>();
  const cited: CitedSource[] = [];
  const paragraphs: string[] = [];
  for (const s of scored) {
    if (used.has(s.hit.sourceId) || used.size >= MAX_PASSAGES) continue;
    // A second passage only when it is nearly as relevant as the first.
    if (used.size > 0 && s.coverage < scored[0].coverage * 0.75) continue;
    used.add(s.hit.sourceId);
    cited.push(sources.find((src) => src.sourceId === s.hit.sourceId)!);
    paragraphs.push(`${bestExcerpt(asked, s.hit.text)} [${cited.length}]`);
  }
  return { text: paragraphs.join('\n\n'), sources: cited };
}

/**
 * A line that reads as code or a command rather than prose (a shell command, JSON, a path list).
 * Quoted into a chat answer it loses its layout and reads as noise, so excerpts prefer prose.
 */
export function looksLikeCode(sentence: string): boolean {
  if (/^(curl|npm|npx|export|cd|git|docker|node|ollama)\s/.test(sentence)) return true;
  if (/\b[A-Z][A-Z0-9_]{3,}=\S|\$[A-Z_]{2,}|\s-[A-Za-z]\s+["'$]|[{}]\s*["}]|=>|\|\|/.test(sentence)) return true;
  const symbols = sentence.replace(/[\p{L}\p{N}\s.,;:'’()?!-]/gu, '').length;
  return symbols / Math.max(1, sentence.length) > 0.12;
}

/**
 * The sentence that covers the question best, with the sentences that follow it while they fit: the
 * answer to "how do I…" usually continues after the sentence that names the topic. Prose wins over
 * code when both cover the question; the excerpt stops where code starts.
 */
function bestExcerpt(asked: string[], text: string): string {
  const list = sentences(text);
  if (list.length === 0) return clip(text.trim(), MAX_PASSAGE_CHARS);
  const prose = list.map((s) => !looksLikeCode(s));
  let best = 0;
  let bestScore = -1;
  list.forEach((s, i) => {
    // A code line counts only when no prose line covers the question as well.
    const score = coverage(asked, keywords(s)) - (prose[i] ? 0 : 0.5);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  let out = list[best];
  for (let i = best + 1; i < list.length && prose[i] && out.length + list[i].length + 1 <= MAX_PASSAGE_CHARS; i++) out += ` ${list[i]}`;
  return clip(out, MAX_PASSAGE_CHARS);
}
