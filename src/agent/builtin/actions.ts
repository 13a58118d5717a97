import { askLabel, fillParameters, readProperties } from './action-params.js';
import { KNOWLEDGE_TOOL } from '../../knowledge/tool.js';
import { HANDOFF_TOOL } from '../handoff-tool.js';
import { clip, coverage, humanize, keywords } from './text.js';
import type { BuiltinDecision, BuiltinTurn, OfferedTool } from './types.js';

export { fillParameters } from './action-params.js';

/** Opening of the question the builtin asks when a matched action lacks parameters. */
const ASK_PREFIX = 'To ';

/**
 * Whether an offered tool is one of the project's actions: not the knowledge search, and not the
 * handoff, which only a request for a person calls (handoff.ts), never a question that shares a
 * word with its name ("request") or description ("person", "user").
 */
export function isActionTool(name: string): boolean {
  return name !== KNOWLEDGE_TOOL && name !== HANDOFF_TOOL;
}

/**
 * The actions part of the builtin model: picks the offered action whose name, description and
 * example phrases match the user's words, fills its parameters from the conversation by their
 * JSON Schema, calls it when every required parameter is known and asks for the rest otherwise
 * (the reply, next turn, completes the call); then phrases what the action returned.
 */
export function actionsSkill(turn: BuiltinTurn): BuiltinDecision | null {
  const actions = turn.tools.filter((t) => isActionTool(t.name));
  const done = turn.outcomes.filter((o) => isActionTool(o.toolName));
  if (done.length > 0) {
    const last = done[done.length - 1]!;
    const tool = actions.find((t) => t.name === last.toolName);
    return { kind: 'answer', text: phraseResult(tool ? label(tool) : humanize(last.toolName), last.output, last.isError) };
  }
  if (turn.outcomes.length > 0 || actions.length === 0) return null;

  // A reply to our own question completes the earlier request: read both messages.
  const pending = actions.find((t) => turn.previousAnswer?.startsWith(askOpening(t)));
  const action = pending ?? matchAction(turn.question, actions);
  if (!action) return null;
  const texts = pending ? turn.userTexts.slice(-2) : [turn.question];
  const { input, missing } = fillParameters(action.inputSchema, texts, pending ? turn.question : null);
  if (missing.length === 0) return { kind: 'call', toolName: action.name, input };
  return { kind: 'answer', text: `${askOpening(action)}, I need ${listOf(missing.map(askLabel))}. Could you tell me?` };
}

/**
 * How well `question` fits an action: words of its name count double, words of its description
 * once, a value for one of its parameters (an order number matching its pattern, an e-mail) once,
 * and an example phrase whose meaningful words the question mostly repeats counts most. `evidence`
 * is how many of these things the question says, `share` the part of the question's meaningful
 * words that are the action's own.
 */
export function actionScore(question: string, action: OfferedTool): { score: number; evidence: number; share: number } {
  const asked = keywords(question);
  const askedSet = new Set(asked);
  const { description: text, examples } = action;
  const nameWords = new Set(keywords(humanize(action.name)));
  const descWords = new Set(keywords(text));
  let nameHits = 0;
  let descHits = 0;
  for (const w of askedSet) {
    if (nameWords.has(w)) nameHits++;
    else if (descWords.has(w)) descHits++;
  }
  // The share of an example's words the question says, and of the question's words the example has.
  const exampleFit = Math.max(0, ...examples.map((e) => {
    const ek = keywords(e);
    return ek.length === 0 ? 0 : Math.min(coverage(ek, askedSet), 0.5 + coverage(asked, ek) / 2);
  }));
  const exampleScore = exampleFit >= 0.6 ? 4 * exampleFit : 0;
  // Values only count beside a word of the action: an e-mail or a number alone names no action.
  const values = nameHits + descHits > 0 ? specificValues(action, question) : 0;
  return {
    score: nameHits * 2 + descHits + values + exampleScore,
    evidence: nameHits + descHits + values + (exampleScore > 0 ? 2 : 0),
    share: askedSet.size === 0 ? 0 : (nameHits + descHits) / askedSet.size,
  };
}

/**
 * Parameters the question gives a value for by the parameter's own form (a pattern, a format, an
 * enum value): a value that only a loose reading found (any number, any word after the name) is
 * no sign that the question is about this action.
 */
function specificValues(action: OfferedTool, question: string): number {
  const { input } = fillParameters(action.inputSchema, [question], null);
  return readProperties(action.inputSchema).filter((p) => p.name in input && (p.pattern || p.format || p.enum)).length;
}

/**
 * The offered action that best matches `question`, or null when none does convincingly: a close
 * example, at least two signs (a name word and a description word, two name words, a name word
 * and a value of one of its parameters), or one sign that is most of what the question says
 * ("Where is my order?"). One common word in a question about something else ("the order of the
 * columns", "an HTTP request") never starts an action.
 */
export function matchAction(question: string, actions: OfferedTool[]): OfferedTool | null {
  let best: OfferedTool | null = null;
  let bestScore = 0;
  for (const action of actions) {
    const { score, evidence, share } = actionScore(question, action);
    if ((evidence >= 2 || share > 0.5) && score >= 2 && score > bestScore) {
      best = action;
      bestScore = score;
    }
  }
  return best;
}

/** Short label of an action: the first sentence of its description, else its humanized name. */
function label(action: OfferedTool): string {
  const first = action.description.split(/(?<=[.!?])\s|\n/)[0]?.trim().replace(/[.!?]$/, '');
  return first && first.length <= 80 ? first.replace(/^\p{Lu}(?=\p{Ll})/u, (c) => c.toLowerCase()) : humanize(action.name);
}

function askOpening(action: OfferedTool): string {
  return `${ASK_PREFIX}${label(action)}`;
}

function listOf(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** An action tool's output ({status, ok, body}) or any other tool's JSON. */
interface HttpOutput {
  status: number;
  ok: boolean;
  body: unknown;
  truncated?: boolean;
}

function isHttpOutput(output: unknown): output is HttpOutput {
  const o = output as Record<string, unknown> | null;
  return !!o && typeof o === 'object' && typeof o.status === 'number' && typeof o.ok === 'boolean' && 'body' in o;
}

/**
 * What an action returned, as a short readable answer: the endpoint's own message if it has one,
 * then its facts as a list (nested objects one level deep, lists of records item by item). A
 * refused or failed call says so plainly, with the endpoint's explanation when it gave one.
 */
export function phraseResult(actionLabel: string, output: unknown, isError: boolean): string {
  if (isError) {
    const why = typeof output === 'string' ? output : pickMessage(output);
    return `I tried to ${actionLabel}, but it did not work${why ? ` (${clip(why, 200).replace(/\.$/, '')})` : ''}. Please try again later.`;
  }
  const http = isHttpOutput(output) ? output : null;
  const body = http ? http.body : output;
  const message = pickMessage(body);
  if (http && !http.ok) {
    const reason = message ? `: ${clip(message, 300)}` : '';
    if (http.status === 404) return `I couldn't ${actionLabel}${reason || ': nothing was found'}. Could you check the details you gave me?`;
    if (http.status < 500) return `I couldn't ${actionLabel}${reason || ' with those details'}. Could you check them?`;
    return `I tried to ${actionLabel}, but the service is having trouble right now${reason}. Please try again later.`;
  }
  if (typeof body === 'string') return body.trim() ? clip(body.trim(), 800) : `Done: I did "${actionLabel}" for you.`;
  const lines = describe(body).filter((l) => !/^- (message|summary): /i.test(l)).slice(0, 14);
  const head = message ? clip(message, 400) : lines.length > 0 ? `Here is what I found (${actionLabel}):` : `Done: I did "${actionLabel}" for you.`;
  const tail = http?.truncated ? '\n\n(The answer was long; this is the first part.)' : '';
  return (lines.length > 0 ? `${head}\n\n${lines.join('\n')}` : head) + tail;
}

function pickMessage(output: unknown): string | null {
  if (typeof output === 'string') return output;
  const o = output as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return null;
  for (const key of ['message', 'error', 'detail', 'summary', 'status_message']) {
    if (typeof o[key] === 'string' && o[key]) return o[key] as string;
  }
  return null;
}

function scalar(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v !== 'object') return clip(String(v), 200);
  return null;
}

/** One line per fact: `- Key: value`, records in lists as `  - a: 1, b: 2`. */
function describe(value: unknown, depth = 0): string[] {
  if (Array.isArray(value)) return listLines(value, '');
  if (!value || typeof value !== 'object') return [];
  const lines: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const key = humanize(k).replace(/^\p{Ll}/u, (c) => c.toUpperCase());
    const s = scalar(v);
    if (s !== null) lines.push(`- ${key}: ${s}`);
    else if (Array.isArray(v)) lines.push(...listLines(v, key));
    else if (v && typeof v === 'object' && depth < 1) {
      const inner = Object.entries(v).map(([ik, iv]) => [ik, scalar(iv)] as const).filter(([, iv]) => iv !== null);
      if (inner.length) lines.push(`- ${key}: ${inner.map(([ik, iv]) => `${humanize(ik)} ${iv}`).join(', ')}`);
    }
  }
  return lines;
}

function listLines(items: unknown[], key: string): string[] {
  if (items.every((i) => scalar(i) !== null)) return [`- ${key || 'Items'}: ${items.map(scalar).join(', ')}`];
  const shown = items.slice(0, 5).map((item) => {
    const pairs = item && typeof item === 'object' ? Object.entries(item).map(([k, v]) => [k, scalar(v)] as const).filter(([, v]) => v !== null) : [];
    return `  - ${pairs.map(([k, v]) => `${humanize(k)}: ${v}`).join(', ')}`;
  });
  const more = items.length > 5 ? [`  - …and ${items.length - 5} more`] : [];
  return [`- ${key || 'Items'} (${items.length}):`, ...shown, ...more];
}
