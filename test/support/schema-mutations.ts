/**
 * Malformed values for a field of a JSON Schema (the OpenAPI document's request schemas), for the
 * bad-input sweep (src/http/bad-input.sweep.test.ts): what each type, bound and format lets a
 * client get wrong.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Schema = Record<string, any>;

/** A raw JSON number token that `JSON.stringify` cannot write: the marker is swapped for it in the text. */
export const raw = (token: string) => `@@raw:${token}`;
export const toText = (body: Json) => JSON.stringify(body).replace(/"@@raw:([^"]*)"/g, '$1');

/** Times a date-time pattern lets through that a database or `Date` may not hold. */
export const DATES = ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00+23:59', '9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59.99999999999Z', '2024-02-29T24:00:00Z', '1969-12-31T23:59:59.999999Z'];
/** URLs that are no http(s) URL, or one that a parser and a fetcher read differently. */
export const URLS = ['not a url', 'http://', 'http://[::1', 'ftp://example.com/x', 'javascript:alert(1)', 'http://example.com:99999/', 'http://exa mple.com/', 'http://%zz/', 'http://example.com/\u0000', `http://${'a'.repeat(300)}.com/`, 'file:///etc/passwd', 'http://169.254.169.254/latest/'];
export const EMAILS = ['a@b', '@example.com', 'a@@example.com', `${'a'.repeat(300)}@example.com`, 'a b@example.com', 'A@EXAMPLE.COM'];
/** Paging cursors: strings are sent as they are, values as base64url JSON. */
export const CURSORS: Json[] = [
  '!!!!', 'e30', Buffer.from('not json').toString('base64url'), '_-_-', 'a', 'AAAA',
  [], [1, 2], ['x', 'y'], [null, null], ['2024-01-01T00:00:00.000Z'], ['2024-01-01T00:00:00.000Z', 5], ['2024-01-01T00:00:00.000Z', 'x', 'extra'],
  ['9999-99-99T99:99:99Z', 'conv_x'], ['not a date', 'conv_x'], [1e308, 'x'], [{ a: 1 }, []], ['2024-01-01T00:00:00.000Z', 'a'.repeat(300)],
  { t: 1 }, { t: 'not a date' }, { t: '2024-13-01T00:00:00.000Z' }, { t: null }, {}, 'x', 5, null, true,
];
const sample: Record<string, Json> = { string: 'x', number: 7, boolean: true, array: [], object: {}, null: null };

/** The JSON types a schema admits (`undefined`: anything). */
export function typesOf(schema: Schema, deref: (s: Schema) => Schema): Set<string> | undefined {
  const s = deref(schema);
  if (s.anyOf || s.oneOf) {
    const all = new Set<string>();
    for (const branch of s.anyOf ?? s.oneOf) {
      const types = typesOf(branch, deref);
      if (!types) return undefined;
      types.forEach((type) => all.add(type));
    }
    return all;
  }
  if (s.const !== undefined) return new Set([jsonType(s.const)]);
  if (s.enum) return new Set(s.enum.map(jsonType));
  if (s.type) return new Set([s.type].flat().map((type: string) => (type === 'integer' ? 'number' : type)));
  return undefined;
}

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** The first branch of a schema that holds `type` (an anyOf of a string and an object, say). */
function branchOf(schema: Schema, type: string, deref: (s: Schema) => Schema): Schema | undefined {
  const s = deref(schema);
  for (const branch of s.anyOf ?? s.oneOf ?? [s]) {
    const b = deref(branch);
    if (b.anyOf || b.oneOf) {
      const inner = branchOf(b, type, deref);
      if (inner) return inner;
    } else if (typesOf(b, deref)?.has(type) || (type === 'number' && [b.type].flat().includes('integer'))) return b;
  }
  return undefined;
}

export function setAt(body: Json, path: Array<string | number>, value: Json | undefined): Json {
  if (path.length === 0) return value as Json;
  const [head, ...rest] = path;
  if (Array.isArray(body)) return body.map((v, i) => (i === head ? setAt(v, rest, value) : v));
  const obj = { ...(body as Record<string, Json>) };
  if (rest.length === 0 && value === undefined) delete obj[head as string];
  else obj[head as string] = setAt(obj[head as string] ?? {}, rest, value);
  return obj;
}

/** One malformed value: where it goes in the body (`[]`: the body itself) and whether the schema refuses it. */
export interface Mutation {
  label: string;
  value: Json | undefined;
  path: Array<string | number>;
  refused: boolean;
}

/**
 * The malformed values of one field, from its schema; `undefined` deletes the field. Fields deeper
 * in are walked where the valid body has a value to go into. `refused` marks what the schema itself
 * forbids (a wrong type, a bound crossed, an unknown key where none is allowed): such a request must
 * get a 4xx, not be stored. The rest (an empty or blank string where no minimum is set, a value at
 * its limit, an odd but well-formed URL) may be accepted, but never answered with a 5xx.
 */
export function fieldMutations(name: string, schema: Schema, value: Json | undefined, required: boolean, deref: (s: Schema) => Schema): Mutation[] {
  const out: Mutation[] = [];
  const add = (label: string, v: Json | undefined, refused = false, path: Array<string | number> = []) => out.push({ label, value: v, path, refused });
  const types = typesOf(schema, deref);
  if (required) add('missing', undefined, true);
  if (types) for (const [type, v] of Object.entries(sample)) if (!types.has(type)) add(`${type} instead`, v, true);

  const str = types === undefined || types.has('string') ? branchOf(schema, 'string', deref) : undefined;
  if (str) {
    add('empty string', '', (str.minLength ?? 0) > 0);
    if (str.maxLength) {
      // At the limit is valid: what a handler makes of the longest input must not fail either.
      add('at maxLength', 'x'.repeat(str.maxLength));
      add('one over maxLength', 'x'.repeat(str.maxLength + 1), true);
      add('far over maxLength', 'x'.repeat(Math.min(str.maxLength * 50, 200_000)), true);
    } else add('very long', 'x'.repeat(200_000));
    const base = typeof value === 'string' ? value : 'x';
    add('U+0000', `${base}\u0000`, true);
    add('lone surrogate', `${base}\ud800`, true);
    add('lone low surrogate', `\udc00${base}`, true);
    add('whitespace', '   ');
    add('control characters', `${base}\r\n\t\u001b`);
    if (str.format === 'date-time') for (const v of DATES) add(`date ${v}`, v);
    if (str.format === 'uri' || /url|href/i.test(name)) for (const v of URLS) add(`url ${v.slice(0, 30)}`, v);
    if (str.format === 'email' || /email/i.test(name)) for (const v of EMAILS) add(`email ${v.slice(0, 30)}`, v);
    if (str.enum) {
      add('not in enum', 'NOT_A_VALUE', true);
      const first = String(str.enum[0]);
      const other = first.toUpperCase() === first ? first.toLowerCase() : first.toUpperCase();
      add('enum in other case', other, !str.enum.includes(other));
    }
  }
  const num = types === undefined || types.has('number') ? branchOf(schema, 'number', deref) : undefined;
  if (num) {
    const integer = [num.type].flat().includes('integer');
    if (num.minimum !== undefined) add('at minimum', num.minimum), add('below minimum', num.minimum - 1, true);
    if (num.maximum !== undefined) add('at maximum', num.maximum), add('above maximum', num.maximum + 1, true);
    add('fraction', 1.5, integer), add('negative', -1, num.minimum > -1), add('zero', 0, num.minimum > 0);
    add('1e308', 1e308, integer || num.maximum !== undefined), add('2^53+1', raw('9007199254740993'), integer || num.maximum !== undefined);
    // Beyond a double: JSON.parse reads them as ±Infinity (and 1e-400 as 0).
    add('1e309 raw', raw('1e309'), true), add('-1e309 raw', raw('-1e309'), true);
    add('1e-400 raw', raw('1e-400'), num.minimum > 0), add('-0 raw', raw('-0'), num.minimum > 0);
  }
  const arr = types === undefined || types.has('array') ? branchOf(schema, 'array', deref) : undefined;
  if (arr) {
    const item: Json = Array.isArray(value) && value.length > 0 ? value[0]! : 'x';
    if (arr.minItems) add('empty array', [], true);
    if (arr.maxItems) add('at maxItems', Array.from({ length: arr.maxItems }, () => item));
    if (arr.maxItems) add('over maxItems', Array.from({ length: arr.maxItems + 1 }, () => item), true);
    if (arr.items && Array.isArray(value) && value.length > 0) {
      for (const m of fieldMutations(name, arr.items, value[0], false, deref)) add(`[0] ${m.label}`, m.value, m.refused, [0, ...m.path]);
    } else if (arr.items) {
      for (const m of fieldMutations(name, arr.items, undefined, false, deref).filter((m) => m.path.length === 0).slice(0, 3)) add(`[0] ${m.label}`, [m.value as Json], m.refused);
    }
  }
  const obj = types === undefined || types.has('object') ? branchOf(schema, 'object', deref) : undefined;
  if (obj) {
    const base = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
    add('unknown key', { ...(base ?? {}), unknownExtraKey: 1 }, obj.additionalProperties === false);
    if (obj.additionalProperties && typeof obj.additionalProperties === 'object') {
      const keyMax = deref(obj.propertyNames ?? {}).maxLength;
      const entry = base && Object.values(base)[0] !== undefined ? Object.values(base)[0]! : 'v';
      add('key far over length', { ...(base ?? {}), ['k'.repeat(keyMax ? keyMax * 20 : 5000)]: entry }, keyMax !== undefined);
      add('empty key', { ...(base ?? {}), '': entry });
      if (obj.maxProperties) add('over maxProperties', Object.fromEntries(Array.from({ length: obj.maxProperties + 1 }, (_, i) => [`K${i}`, entry])), true);
    }
    for (const [prop, propSchema] of Object.entries<Schema>(obj.properties ?? {})) {
      const inner = base?.[prop];
      // Optional fields absent from the valid body are tried at their own level only.
      const mutations = fieldMutations(prop, propSchema, inner, (obj.required ?? []).includes(prop), deref).filter((m) => inner !== undefined || m.path.length === 0);
      for (const m of mutations) add(`${[prop, ...m.path].join('.')} ${m.label}`, m.value, m.refused, [prop, ...m.path]);
    }
  }
  return out;
}
