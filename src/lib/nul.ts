import type { ErrorDetail } from './errors.js';

/**
 * Text the store can keep the same on both databases. U+0000: PostgreSQL's text type cannot hold it
 * (SQLite can). Half of a UTF-16 surrogate pair, which JSON can write (`"\ud800"`) though it is no
 * character: SQLite keeps its bytes, which are not UTF-8, and PostgreSQL a U+FFFD. Input holding
 * either is refused (src/http/nul-guard.ts); text AnswerDesk did not get from a client (model
 * output, action responses, extracted documents) is made storable: U+0000 removed, a lone
 * surrogate replaced by U+FFFD.
 */
const NUL = /\u0000/g;

/** Half of a UTF-16 surrogate pair without its other half: no Unicode character at all. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Whether `text` holds one: String.prototype.isWellFormed (Node 20), five times the pattern's speed on text that is not Latin-1. */
const hasLoneSurrogate = (text: string) => !(text as string & { isWellFormed(): boolean }).isWellFormed();

/** The validation message for a field holding U+0000. */
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/** The validation message for a field holding half of a surrogate pair (`"\ud800"` in JSON). */
const LONE_SURROGATE_MESSAGE = 'must be valid Unicode text: it holds an unpaired surrogate (such as \\ud800)';

/**
 * `text` without U+0000, and nothing else changed: for a piece of a text (a streamed delta), where
 * half a surrogate pair at its edge is whole again with the next piece.
 */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replace(NUL, '') : text;
}

/** `text` without U+0000, and with U+FFFD for each unpaired surrogate. */
export function storable(text: string): string {
  const out = withoutNul(text);
  return hasLoneSurrogate(out) ? out.replace(LONE_SURROGATE, '\uFFFD') : out;
}

/** A copy of a JSON-like value with every string and object key storable. */
export function storableDeep<T>(value: T): T {
  if (typeof value === 'string') return storable(value) as T;
  if (Array.isArray(value)) return value.map((v) => storableDeep(v)) as T;
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableDeep(v)])) as T;
  }
  return value;
}

/**
 * The first `max` UTF-16 units of `text`, or one fewer where the cut would split a surrogate pair
 * (an emoji at the limit): half a pair is not storable (see above).
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * Where U+0000 occurs in a parsed request part (params, query or body): the dot paths of the strings
 * and object keys holding it, as validation details name them (`messages.0.content`).
 */
export function nulPaths(value: unknown): string[] {
  return unstorablePaths(value).nul;
}

/**
 * Both at once, in one walk (the input guard runs on every request body): the dot paths of the
 * strings and object keys holding U+0000 and of those holding an unpaired surrogate, in document
 * order. A key is named with the character escaped (`k\u0000`). Walked with a stack of its own, not
 * by recursion: a body nested twenty thousand arrays deep is still a small request, and is refused
 * by validation after this, not by a stack overflow.
 */
export function unstorablePaths(value: unknown): { nul: string[]; loneSurrogate: string[] } {
  const found = { nul: [] as string[], loneSurrogate: [] as string[] };
  // Each node keeps its parent and key; a path is built only for what is found.
  interface Node {
    value: unknown;
    parent: Node | null;
    key: string;
    /** A node that stands for an object's key rather than its value. */
    isKey?: boolean;
  }
  const pathOf = (node: Node, label: (key: string) => string): string => {
    const keys: string[] = [];
    for (let n: Node | null = node; n && n.parent; n = n.parent) keys.push(n.isKey ? label(n.key) : n.key);
    return keys.reverse().join('.');
  };
  const check = (text: string, node: Node) => {
    if (text.includes('\u0000')) found.nul.push(pathOf(node, (k) => k.replace(NUL, '\\u0000')));
    if (hasLoneSurrogate(text)) found.loneSurrogate.push(pathOf(node, (k) => k.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`)));
  };
  const stack: Node[] = [{ value, parent: null, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (node.isKey) check(node.key, node);
    else if (typeof v === 'string') check(v, node);
    else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: node, key: String(i) });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        stack.push({ value: child, parent: node, key: k });
        stack.push({ value: undefined, parent: node, key: k, isKey: true });
      }
    }
  }
  return found;
}

/** Validation details for every string or key holding U+0000 or an unpaired surrogate in these parts. */
export function nulDetails(...parts: unknown[]): ErrorDetail[] {
  const found = parts.map((part) => unstorablePaths(part));
  return [
    ...found.flatMap((f) => f.nul).map((path) => ({ path, message: NUL_MESSAGE })),
    ...found.flatMap((f) => f.loneSurrogate).map((path) => ({ path, message: LONE_SURROGATE_MESSAGE })),
  ];
}
