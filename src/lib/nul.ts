/**
 * U+0000 in text. PostgreSQL's text type cannot hold it (SQLite can), so text that goes to the
 * store never carries it: input with it is refused (src/http/nul-guard.ts), and text AnswerDesk
 * did not get from a client (model output, action responses, extracted documents) has it removed.
 */
const NUL = /\u0000/g;

/** `text` without U+0000. */
export function stripNul(text: string): string {
  return text.includes('\u0000') ? text.replace(NUL, '') : text;
}

/** A copy of a JSON-like value with U+0000 removed from every string and object key. */
export function stripNulDeep<T>(value: T): T {
  if (typeof value === 'string') return stripNul(value) as T;
  if (Array.isArray(value)) return value.map((v) => stripNulDeep(v)) as T;
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [stripNul(k), stripNulDeep(v)])) as T;
  }
  return value;
}

/**
 * Where U+0000 occurs in a parsed request part (params, query or body): the dot paths of the strings
 * and object keys holding it, as validation details name them (`messages.0.content`).
 */
export function nulPaths(value: unknown): string[] {
  return pathsWhere(value, (s) => s.includes('\u0000'), (k) => k.replace(NUL, '\\u0000'));
}

/** Half of a UTF-16 surrogate pair without its other half: no Unicode character at all. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Where an unpaired surrogate occurs (JSON can write one, `"\ud800"`, though it is no character):
 * the dot paths, as nulPaths gives them. Each database stores such text differently (SQLite as three
 * U+FFFD, PostgreSQL as one), and neither as it was sent.
 */
export function loneSurrogatePaths(value: unknown): string[] {
  const lone = (s: string) => s.search(LONE_SURROGATE) >= 0;
  return pathsWhere(value, lone, (k) => k.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`));
}

/** The dot paths of the strings and object keys of `value` that pass `test`; keys shown by `label`. */
function pathsWhere(value: unknown, test: (s: string) => boolean, label: (key: string) => string, path: string[] = [], found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (test(value)) found.push(path.join('.'));
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => pathsWhere(v, test, label, [...path, String(i)], found));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (test(k)) found.push([...path, label(k)].join('.'));
      pathsWhere(v, test, label, [...path, k], found);
    }
  }
  return found;
}
