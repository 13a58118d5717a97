import { checkArguments } from '../../actions/json-schema.js';
import { clip, humanize, keywords, words } from './text.js';
import type { JsonSchema } from './types.js';

/** One property of an action's parameters schema, as the builtin model reads it. */
export interface Property {
  name: string;
  schema: Record<string, unknown>;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  description?: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const EMAIL = /[^\s@<>(),;:"']+@[^\s@<>(),;:"']+\.[A-Za-z]{2,}/g;
const URL_RE = /\bhttps?:\/\/[^\s<>"')]+/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ISO_DATE_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})\b/g;
const PHONE = /\+?\d[\d\s().-]{6,}\d/g;

export function readProperties(schema: JsonSchema): Property[] {
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  return Object.entries(props).flatMap(([name, raw]) => {
    if (!raw || typeof raw !== 'object') return [];
    const s = raw as Record<string, unknown>;
    const type = Array.isArray(s.type) ? (s.type.find((x) => x !== 'null') as string | undefined) : (s.type as string | undefined);
    return [
      {
        name,
        schema: s,
        type: type ?? (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string') ? 'string' : undefined),
        format: typeof s.format === 'string' ? s.format : undefined,
        pattern: typeof s.pattern === 'string' ? s.pattern : undefined,
        enum: Array.isArray(s.enum) ? s.enum : undefined,
        description: typeof s.description === 'string' ? s.description : undefined,
      },
    ];
  });
}

/** True when `value` satisfies the property's own schema (type, pattern, format, enum, bounds). */
export function accepts(prop: Property, value: unknown): boolean {
  try {
    return checkArguments(JSON.stringify({ type: 'object', properties: { v: prop.schema } }), { v: value }).ok;
  } catch {
    // A sub-schema that cannot stand alone (e.g. a $ref into its parent): trust the extraction.
    return true;
  }
}

/** Words of the text with surrounding punctuation removed: the units values are found in. */
function tokens(text: string): string[] {
  return text
    .split(/\s+/)
    .map((t) => t.replace(/^[("'“‘[<#]+|[)"'”’\]>.,;:!?]+$/g, ''))
    .filter(Boolean);
}

function isoDate(y: number, m: number, d: number): string | undefined {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  return date.toISOString().slice(0, 10);
}

/** A value found in the text, and the text it was read from (claimed so nothing is read twice). */
interface Candidate {
  value: unknown;
  raw: string;
}

const found = (re: RegExp, text: string, map: (s: string) => string = (s) => s): Candidate[] =>
  [...text.matchAll(re)].map((m) => ({ value: map(m[0]), raw: m[0] }));

/**
 * Dates written the ways people write them: 2025-03-14, 14 March 2025, March 14(, 2025), 14.03.2025
 * (day first), 03/14/2025 (month first unless the first number is over 12), today, tomorrow,
 * yesterday. A date without a year is taken in the current year.
 */
function dateCandidates(text: string, today = new Date()): Candidate[] {
  const out: Array<{ value: string | undefined; raw: string }> = [];
  const year = today.getUTCFullYear();
  const month = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;
  for (const m of text.matchAll(/\b(\d{4})-(\d{2})-(\d{2})\b/g)) out.push({ value: isoDate(+m[1]!, +m[2]!, +m[3]!), raw: m[0] });
  for (const m of text.matchAll(/\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([A-Za-z]{3,9})\.?,?(?:\s+(\d{4}))?\b/g)) {
    if (month(m[2]!) > 0) out.push({ value: isoDate(m[3] ? +m[3] : year, month(m[2]!), +m[1]!), raw: m[0] });
  }
  for (const m of text.matchAll(/\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b/g)) {
    if (month(m[1]!) > 0) out.push({ value: isoDate(m[3] ? +m[3] : year, month(m[1]!), +m[2]!), raw: m[0] });
  }
  for (const m of text.matchAll(/\b(\d{1,2})([./])(\d{1,2})\2(\d{4})\b/g)) {
    const [a, b, y] = [+m[1]!, +m[3]!, +m[4]!];
    const dayFirst = a > 12 || (b <= 12 && m[2] === '.');
    out.push({ value: dayFirst ? isoDate(y, b, a) : isoDate(y, a, b), raw: m[0] });
  }
  const base = Date.UTC(year, today.getUTCMonth(), today.getUTCDate());
  const rel: Record<string, number> = { today: 0, tomorrow: 1, yesterday: -1 };
  for (const m of text.matchAll(/\b(today|tomorrow|yesterday)\b/gi)) {
    out.push({ value: new Date(base + rel[m[1]!.toLowerCase()]! * 86_400_000).toISOString().slice(0, 10), raw: m[0] });
  }
  return out.filter((c): c is Candidate & { value: string } => c.value !== undefined);
}

/** Every date in the text, as YYYY-MM-DD. */
export function findDates(text: string, today = new Date()): string[] {
  return dateCandidates(text, today).map((c) => c.value as string);
}

/** A value right after the parameter's own words: "order number A-1234", "my city is Paris". */
function afterLabel(prop: Property, text: string, valuePattern: string): string | undefined {
  const name = humanize(prop.name);
  const labels = [...new Set([name, ...name.split(' ').filter((w) => w.length > 2)])];
  for (const l of labels) {
    const escaped = l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(`\\b${escaped}s?\\b\\s*(?:is|=|:|of|number|no\\.?|#)?\\s*${valuePattern}`, 'i');
    const m = re.exec(text);
    if (m?.[1] && (keywords(m[1]).length > 0 || /\d/.test(m[1]))) return m[1];
  }
  return undefined;
}

function patternOf(prop: Property): RegExp | null {
  if (!prop.pattern) return null;
  try {
    return new RegExp(prop.pattern, 'u');
  } catch {
    return null;
  }
}

/** Enum values named in the text: exact words, or the humanized value ("next_day" ↔ "next day"). */
function enumCandidates(prop: Property, text: string): Candidate[] {
  const out: Candidate[] = [];
  for (const v of prop.enum!) {
    if (typeof v === 'number') {
      const m = new RegExp(`(?<![\\d.])${v}(?![\\d.])`).exec(text);
      if (m) out.push({ value: v, raw: m[0] });
      continue;
    }
    if (typeof v !== 'string' || !v) continue;
    const phrase = words(humanize(v)).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s_-]+');
    const exact = phrase ? new RegExp(`(?<![\\p{L}\\p{N}])${phrase}(?![\\p{L}\\p{N}])`, 'iu').exec(text) : null;
    if (exact) {
      out.push({ value: v, raw: exact[0] });
      continue;
    }
    // One-word values also match inflections ("upgrading" for "upgrade").
    const k = keywords(v);
    const word = k.length === 1 ? words(text).find((w) => keywords(w)[0] === k[0]) : undefined;
    if (word) out.push({ value: v, raw: word });
  }
  // Longest first: "express plus" beats "express".
  return out.sort((a, b) => String(b.value).length - String(a.value).length);
}

function numberCandidates(prop: Property, text: string): Candidate[] {
  const labelled = afterLabel(prop, text, '(-?\\d+(?:[.,]\\d+)?)');
  // Stand-alone numbers only: not the digits of A-1234, 2025-03-14 or 3/14.
  const all = [...text.matchAll(/(?<![\w.\-/])-?\d+(?:\.\d+)?(?![\w\-/]|\.\d)/g)].map((m) => m[0]);
  return [...(labelled ? [labelled] : []), ...all]
    .map((raw) => ({ value: Number(raw.replace(',', '.')), raw }))
    .filter((c) => Number.isFinite(c.value));
}

function booleanCandidates(prop: Property, text: string): Candidate[] {
  const v = afterLabel(prop, text, '(yes|no|true|false|on|off)');
  return v ? [{ value: /^(yes|true|on)$/i.test(v), raw: v }] : [];
}

/** Candidate values for a string property, most specific evidence first. */
function stringCandidates(prop: Property, text: string): Candidate[] {
  const format = prop.format;
  if (format === 'email' || (!format && /e-?mail/i.test(prop.name))) return found(EMAIL, text);
  if (format === 'date') return dateCandidates(text);
  if (format === 'date-time') return found(ISO_DATE_TIME, text);
  if (format === 'uri' || format === 'url' || format === 'uri-reference') return found(URL_RE, text);
  if (format === 'uuid') return found(UUID, text);
  if (!format && /phone|mobile/i.test(prop.name)) return found(PHONE, text, (s) => s.trim());
  const re = patternOf(prop);
  if (re) {
    // Every token the pattern accepts, as written and upper-cased ("a-1234" for ^A-\d{4}$).
    const labelled = afterLabel(prop, text, '#?([^\\s,;!?]+)');
    return [...(labelled ? [labelled.replace(/[.]+$/, '')] : []), ...tokens(text)]
      .flatMap((raw) => [{ value: raw, raw }, { value: raw.toUpperCase(), raw }])
      .filter((c) => re.test(c.value));
  }
  const asCandidates = (list: string[]) => list.map((raw) => ({ value: raw, raw }));
  if (/(id|number|code|ref|reference|no)$/i.test(prop.name) || /\b(id|number|code|reference)\b/i.test(prop.description ?? '')) {
    const labelled = afterLabel(prop, text, '#?([A-Za-z0-9][A-Za-z0-9_-]*\\d[A-Za-z0-9_-]*)');
    const loose = [...text.matchAll(/#?\b([A-Za-z]{0,4}-?\d{3,}[A-Za-z0-9-]*)\b/g)].map((m) => m[1]!);
    return asCandidates([...(labelled ? [labelled] : []), ...loose]);
  }
  const labelled = afterLabel(prop, text, '"?([^\\s",.;!?]+(?: [^\\s",.;!?]+){0,3})"?');
  return labelled ? asCandidates([labelled]) : [];
}

function candidates(prop: Property, text: string): Candidate[] {
  if (prop.enum) return enumCandidates(prop, text);
  switch (prop.type) {
    case 'integer':
    case 'number':
      return numberCandidates(prop, text);
    case 'boolean':
      return booleanCandidates(prop, text);
    case 'string':
    case undefined:
      return stringCandidates(prop, text);
    default:
      return [];
  }
}

/** Evidence strength of a property: the most specific are filled first, so they claim their tokens. */
function specificity(p: Property): number {
  if (p.enum) return 0;
  if (p.pattern || (p.format && p.format !== 'date')) return 1;
  if (p.format === 'date') return 2;
  if (p.type === 'string' || p.type === undefined) return 3;
  return 4;
}

/** A reply to "I need your X": the value itself, without "it's", "my X is", a trailing period. */
export function cleanReply(reply: string): string {
  return reply
    .trim()
    .replace(/^(it'?s|it is|that'?s|that is|my [\p{L}\s]{1,30}? is|sure[,!]?|yes[,!]?|ok(?:ay)?[,!]?)\s+/iu, '')
    .replace(/[.!]+$/, '')
    .trim();
}

function coerce(prop: Property, raw: string): unknown {
  if (!raw || raw.length > 200) return undefined;
  if (prop.enum) return enumCandidates(prop, raw)[0]?.value;
  if (prop.type === 'number' || prop.type === 'integer') {
    const n = Number(raw.replace(',', '.'));
    return Number.isFinite(n) ? n : undefined;
  }
  if (prop.type === 'boolean') return /^(yes|true|y)$/i.test(raw) ? true : /^(no|false|n)$/i.test(raw) ? false : undefined;
  if (prop.format === 'date') return findDates(raw)[0];
  return prop.type === undefined || prop.type === 'string' ? raw : undefined;
}

/**
 * Fills the action's arguments from the user's messages by each parameter's JSON Schema: enum
 * values named in the text, tokens matching a `pattern`, e-mails, dates, URLs and UUIDs by `format`,
 * numbers, and values following the parameter's own name. Every value must satisfy its property's
 * schema, and the words that gave one value cannot give another. When exactly one required parameter is
 * still missing and `reply` answers our question, the reply itself is that value.
 */
export function fillParameters(
  schema: JsonSchema,
  texts: string[],
  reply: string | null,
): { input: Record<string, unknown>; missing: Property[] } {
  const props = readProperties(schema);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  let text = texts.join('\n');
  const input: Record<string, unknown> = {};
  for (const prop of [...props].sort((a, b) => specificity(a) - specificity(b))) {
    const pick = candidates(prop, text).find((c) => accepts(prop, c.value));
    if (!pick) continue;
    input[prop.name] = pick.value;
    // The words that gave this value cannot give another (the 14 of "March 14" is not a quantity).
    text = text.replace(pick.raw, ' '.repeat(pick.raw.length));
  }
  let missing = props.filter((p) => required.has(p.name) && !(p.name in input));
  if (reply && missing.length === 1) {
    const value = coerce(missing[0]!, cleanReply(reply));
    if (value !== undefined && accepts(missing[0]!, value)) {
      input[missing[0]!.name] = value;
      missing = [];
    }
  }
  return { input, missing };
}

/**
 * Words a noun phrase does not start with: question words, prepositions, verbs an instruction
 * starts with ("Use …", "Enter …"). A description that starts with one is not pasted after "your".
 */
const NOT_NOUN_START = new Set(
  ('what which who whom whose when where why how whether if that this these those for to in on at by with from of about ' +
    'use enter provide give set pass send put write say describe explain list include must should can will may do does is are').split(' '),
);
/** Verbs that make a description a clause ("what the user needs", "the city it is for"). */
const CLAUSE_WORD = /\b(?:is|are|was|were|be|been|needs?|wants?|must|should|can|could|will|would|do|does|did|has|have|had)\b/i;

/**
 * The description as "your …" can take it: one short phrase that starts as a noun phrase ("Day of
 * the call", "The order number, e.g. NW-204817"), without its article; or null when it reads as
 * anything else (a question, an instruction, a clause, several sentences).
 */
function nounPhrase(description: string | undefined): string | null {
  const d = description?.trim().replace(/\.$/, '');
  if (!d || d.length > 60 || /[?!;"“”]/.test(d) || /\.\s/.test(d.replace(/\b(?:e\.g|i\.e|etc)\./gi, ''))) return null;
  const head = d.split(/[,:(]|\s(?:e\.g|i\.e)\./i)[0]!.trim();
  const ws = head.split(/\s+/);
  if (!head || ws.length > 6 || NOT_NOUN_START.has(ws[0]!.toLowerCase()) || CLAUSE_WORD.test(head)) return null;
  return d.replace(/^(the|your|an?)\s+/i, '').replace(/^\p{Lu}(?=\p{Ll})/u, (c) => c.toLowerCase());
}

/**
 * How the builtin asks for a parameter, with a hint of the expected form: "your day of the call (a
 * date such as 2025-03-14)" when the description is a noun phrase, else the parameter by its name
 * with the description quoted ('the reason ("What the user needs a person for, in one sentence.")'),
 * which reads right whatever the description says.
 */
export function askLabel(prop: Property): string {
  const described = prop.description?.trim();
  const phrase = nounPhrase(described);
  const base = phrase ? `your ${phrase}` : described ? `the ${humanize(prop.name)} ("${clip(described, 160)}")` : `your ${humanize(prop.name)}`;
  if (prop.enum?.length && prop.enum.length <= 6) {
    const opts = prop.enum.map(String);
    return `${base} (${opts.length > 1 ? `${opts.slice(0, -1).join(', ')} or ${opts.at(-1)}` : opts[0]})`;
  }
  if (prop.format === 'date' && !/\d/.test(base)) return `${base} (a date such as 2025-03-14)`;
  return base;
}
