import { KNOWLEDGE_TOOL } from './knowledge.js';
import { clip, humanize, keywords, words } from './text.js';
import type { BuiltinDecision, BuiltinTurn, JsonSchema, OfferedTool } from './types.js';

/** Opening of the question the builtin asks when a matched action lacks parameters. */
const ASK_PREFIX = 'To ';

/**
 * The actions part of the builtin model: picks the offered action whose name and description match
 * the user's words, fills its parameters from the conversation, calls it when every required
 * parameter is known and asks for the rest otherwise; then phrases what the action returned.
 */
export function actionsSkill(turn: BuiltinTurn): BuiltinDecision | null {
  const actions = turn.tools.filter((t) => t.name !== KNOWLEDGE_TOOL);
  const done = turn.outcomes.filter((o) => o.toolName !== KNOWLEDGE_TOOL);
  if (done.length > 0) {
    const last = done[done.length - 1];
    const tool = actions.find((t) => t.name === last.toolName);
    return { kind: 'answer', text: phraseResult(tool ? label(tool) : humanize(last.toolName), last.output, last.isError) };
  }
  if (turn.outcomes.length > 0 || actions.length === 0) return null;

  const pending = actions.find((t) => turn.previousAnswer?.startsWith(askOpening(t)));
  const action = pending ?? matchAction(turn.question, actions);
  if (!action) return null;

  // A reply to our own question completes the earlier request: read both messages.
  const texts = pending ? turn.userTexts.slice(-2) : [turn.question];
  const { input, missing } = fillParameters(action.inputSchema, texts, pending ? turn.question : null);
  if (missing.length === 0) return { kind: 'call', toolName: action.name, input };
  return { kind: 'answer', text: `${askOpening(action)}, I need ${listOf(missing.map((m) => `your ${m}`))}. Could you tell me?` };
}

/** The offered action that best matches `question`, or null when none does convincingly. */
export function matchAction(question: string, actions: OfferedTool[]): OfferedTool | null {
  const asked = new Set(keywords(question));
  let best: OfferedTool | null = null;
  let bestScore = 0;
  for (const action of actions) {
    const nameWords = new Set(keywords(humanize(action.name)));
    const descWords = new Set(keywords(action.description));
    let nameHits = 0;
    let descHits = 0;
    for (const w of asked) {
      if (nameWords.has(w)) nameHits++;
      else if (descWords.has(w)) descHits++;
    }
    // One name word, or two description words (description includes the example phrases).
    if (nameHits === 0 && descHits < 2) continue;
    const score = nameHits * 2 + descHits;
    if (score > bestScore) {
      best = action;
      bestScore = score;
    }
  }
  return best;
}

interface Property {
  name: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  description?: string;
}

/** Parameters of the action read from the user's messages, and the labels of required ones missing. */
export function fillParameters(
  schema: JsonSchema,
  texts: string[],
  reply: string | null,
): { input: Record<string, unknown>; missing: string[] } {
  const props = Object.entries((schema.properties ?? {}) as Record<string, Omit<Property, 'name'> | boolean>).flatMap(
    ([name, p]) => (typeof p === 'object' ? [{ name, ...p } as Property] : []),
  );
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const text = texts.join('\n');
  const input: Record<string, unknown> = {};
  const missing: string[] = [];
  const requiredProps = props.filter((p) => required.has(p.name));
  for (const prop of props) {
    // A short reply to "I need your X" is X itself when X was the only thing asked for.
    const soleAnswer = reply && requiredProps.length === 1 && requiredProps[0] === prop ? cleanReply(reply) : null;
    const value = extract(prop, text) ?? (soleAnswer ? coerce(prop, soleAnswer) : undefined);
    if (value !== undefined) input[prop.name] = value;
    else if (required.has(prop.name)) missing.push(propLabel(prop));
  }
  return { input, missing };
}

function extract(prop: Property, text: string): unknown {
  const type = prop.type ?? 'string';
  if (prop.enum) {
    const lower = words(text);
    return prop.enum.find((v) => typeof v === 'string' && lower.includes(v.toLowerCase()));
  }
  if (prop.format === 'email' || /e-?mail/i.test(prop.name)) return /[^\s@<>(),;:]+@[^\s@<>(),;:]+\.[A-Za-z]{2,}/.exec(text)?.[0];
  if (type === 'number' || type === 'integer') {
    const labelled = afterLabel(prop, text, '(-?\\d+(?:[.,]\\d+)?)');
    const any = labelled ?? /(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])/.exec(text)?.[0];
    if (!any) return undefined;
    const n = Number(any.replace(',', '.'));
    return type === 'integer' ? (Number.isInteger(n) ? n : undefined) : n;
  }
  if (type !== 'string') return undefined;
  if (/(id|number|code|ref|reference|no)$/i.test(prop.name) || /\b(id|number|code|reference)\b/i.test(prop.description ?? '')) {
    return afterLabel(prop, text, '#?([A-Za-z0-9][A-Za-z0-9_-]*\\d[A-Za-z0-9_-]*)') ?? /#?\b([A-Za-z]{0,4}-?\d{3,}[A-Za-z0-9-]*)\b/.exec(text)?.[1];
  }
  return afterLabel(prop, text, '"?([^\\s",.;!?]+(?: [^\\s",.;!?]+){0,3})"?');
}

/** A value that follows the parameter's own words: "my city is Paris", "order #123". */
function afterLabel(prop: Property, text: string, valuePattern: string): string | undefined {
  const labels = [...new Set([humanize(prop.name), ...humanize(prop.name).split(' ').filter((w) => w.length > 2)])];
  for (const l of labels) {
    const escaped = l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(`\\b${escaped}s?\\b\\s*(?:is|=|:|of|number|no\\.?|#)?\\s*${valuePattern}`, 'i');
    const m = re.exec(text);
    if (m?.[1] && !keywordOnly(m[1])) return m[1];
  }
  return undefined;
}

/** True for values that are filler words ("is", "the"), never a parameter value. */
function keywordOnly(value: string): boolean {
  return keywords(value).length === 0 && !/\d/.test(value);
}

function cleanReply(reply: string): string {
  return reply
    .trim()
    .replace(/^(it'?s|it is|that'?s|that is|my \w+(?: \w+)? is|sure[,!]?|yes[,!]?)\s+/i, '')
    .replace(/[.!]+$/, '')
    .trim();
}

function coerce(prop: Property, raw: string): unknown {
  if (!raw || raw.length > 200) return undefined;
  if (prop.type === 'number' || prop.type === 'integer') {
    const n = Number(raw.replace(',', '.'));
    if (!Number.isFinite(n) || (prop.type === 'integer' && !Number.isInteger(n))) return undefined;
    return n;
  }
  if (prop.type === 'boolean') {
    if (/^(yes|true|y)$/i.test(raw)) return true;
    if (/^(no|false|n)$/i.test(raw)) return false;
    return undefined;
  }
  return prop.type === undefined || prop.type === 'string' ? raw : undefined;
}

function propLabel(prop: Property): string {
  const d = prop.description?.trim();
  if (d && d.length <= 60) return d.replace(/\.$/, '').replace(/^(the|your)\s+/i, '').replace(/^\p{Lu}(?=\p{Ll})/u, (c) => c.toLowerCase());
  return humanize(prop.name);
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

/** What an action returned, as a short answer: its message if it has one, else its fields. */
export function phraseResult(actionLabel: string, output: unknown, isError: boolean): string {
  const message = pickMessage(output);
  if (isError) return `I tried to ${actionLabel}, but it did not work${message ? `: ${clip(message, 300)}` : '.'} Please try again later.`;
  const lines = flatten(output).slice(0, 10);
  const head = message ? clip(message, 400) : `Done: I did "${actionLabel}" for you.`;
  const detail = lines.filter(([k]) => k !== 'message').map(([k, v]) => `- ${humanize(k)}: ${clip(v, 200)}`);
  return detail.length > 0 ? `${head}\n\n${detail.join('\n')}` : head;
}

function pickMessage(output: unknown): string | null {
  if (typeof output === 'string') return output;
  const o = output as Record<string, unknown> | null;
  for (const key of ['message', 'error', 'detail', 'summary']) {
    if (typeof o?.[key] === 'string' && o[key]) return o[key] as string;
  }
  return null;
}

/** Scalar fields of a JSON value as [dotted.key, text], one level of nesting deep. */
function flatten(value: unknown, prefix = '', depth = 0): Array<[string, string]> {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object') return prefix ? [[prefix, String(value)]] : [];
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) return prefix ? [[prefix, value.join(', ')]] : [];
    return prefix ? [[prefix, `${value.length} item${value.length === 1 ? '' : 's'}`]] : [];
  }
  return Object.entries(value).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return depth < 1 ? flatten(v, key, depth + 1) : [];
    return flatten(v, key, depth);
  });
}
