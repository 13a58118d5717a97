import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../lib/errors.js';

// ajv-formats is CommonJS; under NodeNext its plugin function is the module's `default` property.
const addFormats = addFormatsModule.default;

/** Largest parameters schema accepted, serialized. Tool schemas travel with every model call. */
export const MAX_SCHEMA_BYTES = 32 * 1024;

/**
 * Deepest nesting of objects and arrays accepted in a parameters schema (each level of a schema is
 * two: `properties`, then the property). Tool arguments are a few levels deep; ajv compiles and
 * validates by recursion, and a schema nested a thousand times deep overflows its stack.
 */
export const MAX_SCHEMA_DEPTH = 64;

export type JsonSchemaObject = Record<string, unknown>;

/** How deeply objects and arrays nest in a JSON value, counted without recursion; stops past `limit`. */
function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * A fresh validator (draft-07, the dialect model providers take for tool inputs), strict about
 * unknown keywords and formats so that a typo in a definition is a 400 at save time rather than a
 * silently ignored constraint. Each compiled schema gets its own instance: definitions may carry
 * `$id`s, and two actions with the same `$id` must not collide.
 */
function newAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  return ajv;
}

/** Dotted path of an ajv error, naming the missing property for `required`. */
function errorPath(e: ErrorObject, prefix: string): string {
  const parts = e.instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') parts.push(String((e.params as { missingProperty: string }).missingProperty));
  if (e.keyword === 'additionalProperties') parts.push(String((e.params as { additionalProperty: string }).additionalProperty));
  return [prefix, ...parts].filter(Boolean).join('.');
}

function errorMessage(e: ErrorObject): string {
  if (e.keyword === 'enum') return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'required') return 'is required';
  if (e.keyword === 'additionalProperties') return 'is not an allowed property';
  return e.message ?? 'is invalid';
}

export function toDetails(errors: ErrorObject[] | null | undefined, prefix = ''): ErrorDetail[] {
  return (errors ?? []).map((e) => ({ path: errorPath(e, prefix), message: errorMessage(e) }));
}

/**
 * Checks an action's `parameters` when it is saved: a JSON Schema (draft-07) of `type: "object"`
 * that ajv accepts and compiles (known keywords and formats, resolvable refs, valid patterns).
 * Returns the problems; empty when the schema is usable.
 */
export function checkParametersSchema(schema: unknown, path = 'parameters'): ErrorDetail[] {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    return [{ path, message: 'must be a JSON Schema object' }];
  }
  const s = schema as JsonSchemaObject;
  // First, and alone: JSON.stringify and ajv both recurse, and overflow the stack on a deep value.
  if (nestingDepth(s, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) return [{ path, message: `must nest objects and arrays at most ${MAX_SCHEMA_DEPTH} deep` }];
  const problems: ErrorDetail[] = [];
  if (Buffer.byteLength(JSON.stringify(s)) > MAX_SCHEMA_BYTES) problems.push({ path, message: `must be at most ${MAX_SCHEMA_BYTES} bytes` });
  if (s.type !== 'object') problems.push({ path: `${path}.type`, message: 'must be "object" (tool arguments are an object)' });
  if (s.$schema !== undefined && !/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(String(s.$schema))) {
    problems.push({ path: `${path}.$schema`, message: 'only JSON Schema draft-07 is supported; omit $schema' });
  }
  if (problems.length) return problems;
  const ajv = newAjv();
  if (!ajv.validateSchema(s)) return toDetails(ajv.errors, path);
  try {
    ajv.compile(s);
  } catch (err) {
    return [{ path, message: (err as Error).message }];
  }
  return [];
}

const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

/**
 * The argument validator of a (saved, hence valid) parameters schema. Compiled once per distinct
 * schema text; the oldest entries are dropped past a bound so edited actions do not accumulate.
 */
export function argumentValidator(schemaText: string): ValidateFunction {
  const hit = compiled.get(schemaText);
  if (hit) {
    compiled.delete(schemaText);
    compiled.set(schemaText, hit);
    return hit;
  }
  const fn = newAjv().compile(JSON.parse(schemaText) as JsonSchemaObject);
  compiled.set(schemaText, fn);
  if (compiled.size > MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  return fn;
}

/** Validates tool arguments against the action's schema; the details name each bad argument. */
export function checkArguments(schemaText: string, args: unknown): { ok: true } | { ok: false; details: ErrorDetail[] } {
  // Arguments nested past what any schema of ours allows would overflow the stack of what reads
  // them next (ajv, JSON.stringify).
  if (nestingDepth(args, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) return { ok: false, details: [{ path: '', message: `must nest objects and arrays at most ${MAX_SCHEMA_DEPTH} deep` }] };
  const validate = argumentValidator(schemaText);
  if (validate(args)) return { ok: true };
  return { ok: false, details: toDetails(validate.errors) };
}
