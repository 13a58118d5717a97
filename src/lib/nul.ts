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
export function nulPaths(value: unknown, path: string[] = [], found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path.join('.'));
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulPaths(v, [...path, String(i)], found));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) found.push([...path, k.replace(NUL, '\\u0000')].join('.'));
      nulPaths(v, [...path, k], found);
    }
  }
  return found;
}
