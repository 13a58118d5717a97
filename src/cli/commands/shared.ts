import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { join } from 'node:path';
import type { z } from 'zod';
import { loadConfig } from '../../config.js';
import type { AppDeps } from '../../deps.js';
import type { ErrorDetail } from '../../lib/errors.js';
import { keyDirectory, KEY_FILE_NAME, secretBox, type SecretBox } from '../../lib/secret-box.js';
import { anySealed, otherSealingKey } from '../../projects/hmac-secret.js';
import { openStore, sqliteFile, storeOptions, type Store } from '../../store/index.js';
import { UsageError } from './types.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface ParsedCommand {
  /** String options as given (absent: undefined); boolean flags as true/undefined. */
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  help: boolean;
}

/**
 * `node:util` parseArgs in strict mode (unknown options are errors), with its errors turned into
 * usage errors (exit 2). `-h/--help` is accepted everywhere and reported in `help`.
 */
export function parseCommand(
  args: string[],
  options: Options,
  usage: string,
  positionals: { min: number; max: number; names?: string } = { min: 0, max: 0 },
): ParsedCommand {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''), usage);
  }
  // parseArgs keeps the last of a repeated value option: `user add --project A --role agent
  // --project B` would act on B alone, silently.
  const given = new Set<string>();
  for (const token of parsed.tokens as Array<{ kind: string; name?: string; value?: string }>) {
    if (token.kind !== 'option' || token.name === undefined || token.value === undefined) continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given more than once`, usage);
    given.add(token.name);
  }
  const { help, ...values } = parsed.values as Record<string, string | boolean | undefined>;
  const count = parsed.positionals.length;
  const what = positionals.names ?? 'argument';
  if (!help && (count < positionals.min || count > positionals.max)) {
    throw new UsageError(count < positionals.min ? `Missing ${what}` : `Unexpected argument: ${parsed.positionals[positionals.max]}`, usage);
  }
  // An empty argument ('' from an unset shell variable) names nothing: as if it were not given.
  if (!help && parsed.positionals.some((p) => p.trim() === '')) throw new UsageError(`Missing ${what}`, usage);
  return { values, positionals: parsed.positionals, help: help === true };
}

/** A string option's value; a flag given without its value is a usage error. */
export function option(parsed: ParsedCommand, flag: string): string | undefined {
  const value = parsed.values[flag];
  return typeof value === 'string' ? value : undefined;
}

/** A string option that, when given, must not be blank (`--eval ''` names nothing). */
export function nonBlankOption(parsed: ParsedCommand, flag: string, usage: string): string | undefined {
  const value = option(parsed, flag);
  if (value !== undefined && value.trim() === '') throw new UsageError(`Missing the value of --${flag}`, usage);
  return value;
}

/** A required string option, or a usage error naming it. */
export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`Missing --${flag}`, usage);
  return value.trim();
}

/**
 * Runs `fn` on the database named by DATABASE_URL (migrated on open, like the server), then closes
 * it. The CLI works on the database directly, so it works before any admin token exists.
 */
export async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const file = sqliteFile(config.DATABASE_URL);
  const isNew = file !== null && !existsSync(file);
  const store = await openStore(config.DATABASE_URL, storeOptions(config));
  // A mistyped path would otherwise answer from an empty database as if it were the real one.
  if (isNew) process.stderr.write(`Note: there was no database at ${file} (DATABASE_URL), so a new, empty one was created.\n`);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * The secret box of a command that seals a secret (a project's HMAC secret, an action's header
 * secret, a webhook's signing secret), once the database shows that its secrets were sealed with
 * the same key. A CLI run without the server's ANSWERDESK_SECRET_KEY (or away from its data
 * directory, where it would make a key file of its own) would otherwise write values no server
 * can open; it stops instead, before writing anything.
 */
export async function sealingBox(store: Store, config: Parameters<typeof secretBox>[0]): Promise<SecretBox> {
  const dir = keyDirectory(config);
  const file = dir ? join(dir, KEY_FILE_NAME) : null;
  // No key given and no key file here, over a database whose secrets are sealed: making a key
  // file would be the first step to writing what no server can open.
  if (!config.ANSWERDESK_SECRET_KEY && file && !existsSync(file) && (await anySealed(store.db))) {
    throw new Error(
      `The database's secrets are sealed, and this command has no key: ANSWERDESK_SECRET_KEY is not set and there is no key file ${file}. ` +
        'Nothing was written. Run it with the server\'s ANSWERDESK_SECRET_KEY (or DATABASE_URL beside its data directory).',
    );
  }
  const box = secretBox(config);
  const other = await otherSealingKey(store.db, box);
  if (other === null) return box;
  const from = box.origin === 'env' ? 'ANSWERDESK_SECRET_KEY' : box.origin === 'file' && file ? `the key file ${file}` : 'a key of its own';
  throw new Error(
    `The database's secrets were sealed with key ${other}, and this command has key ${box.keyId} (from ${from}): ` +
      'nothing was written. Run it with the server\'s ANSWERDESK_SECRET_KEY (or DATABASE_URL beside its data directory).',
  );
}

/** The app's deps around the database (no HTTP, a local limiter): for commands that ingest or answer. */
export async function withDeps<T>(fn: (deps: AppDeps) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: the deps pull in the agent, the model providers and ingestion,
  // which most commands never use.
  const [{ createDeps }, { createRateLimiter }] = await Promise.all([import('../../deps.js'), import('../../limits/index.js')]);
  return withStore(async (store) => {
    const limiter = await createRateLimiter(undefined);
    try {
      return await fn(createDeps(loadConfig(), store, limiter));
    } finally {
      await limiter.close();
    }
  });
}

/**
 * The escape sequences of ECMA-48, which terminals follow: CSI (ESC [ or U+009B, parameters,
 * intermediates, a final byte); a control string (OSC, DCS, SOS, PM, APC) up to its terminator (BEL,
 * ESC \ or U+009C), else to the end of its line (one unterminated string must not hide the lines
 * printed after it); any other ESC sequence.
 * Node's util.stripVTControlCharacters is not used: its pattern also takes letters and digits up to
 * a later BEL as part of a sequence (`ESC [2Jhelpful BEL` loses "helpful"), which hides visible text.
 */
const ESCAPE_SEQUENCE =
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\n]*?(?:\u0007|\u001b\\|\u009c|(?=\n)|$)|\u001b[\u0020-\u002f]*[\u0030-\u007e]/g;

/**
 * Text that may have come from outside (a visitor's message or feedback, a gap's question, a crawled
 * page's title, a remote endpoint's answer) made safe for an operator's terminal: escape sequences
 * (colours, window titles, screen clearing, links) removed, then every other C0 and C1 control
 * character but newline and tab, and the bidirectional controls, so the text can no longer drive
 * the terminal or reorder what it shows. What is visible stays.
 */
export function terminalText(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
}

/**
 * Unicode's bidirectional controls (marks, embeddings, overrides, isolates): a right-to-left
 * override shows the text after it reversed, so a message, a name or an id could read as something
 * else on the operator's screen. Letters of right-to-left scripts are not controls and stay.
 */
const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
/** Every control character but newline and tab: C0, DEL, C1 and the bidirectional ones. */
const CONTROL = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BIDI}]`, 'g');
/** What JSON.stringify leaves raw of those: DEL, C1 and the bidirectional controls. */
const RAW_IN_JSON = new RegExp(`[\\u007f-\\u009f${BIDI}]`, 'g');

/**
 * terminalText on one line, white space flattened to single spaces, cut to `max` characters with
 * "…" when longer: for table cells and one-line previews. Controls go first, so an escape sequence
 * cannot reach across a line that is joined.
 */
export function flatText(text: string, max = Infinity): string {
  const flat = terminalText(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Human-readable output that carries stored text: written through terminalText. */
export function printText(text: string): void {
  process.stdout.write(terminalText(text));
}

/**
 * JSON for a terminal or a pipe. JSON.stringify escapes C0 controls but leaves DEL, the C1
 * controls (U+0080–U+009F; U+009B starts a sequence as ESC [ does) and the bidirectional controls
 * raw: written as \u escapes they still parse to the same value, so the output stays exact JSON.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value, 2)}\n`);
}

/**
 * Left-aligned columns with a header row, for lists read by people. Cells go through flatText: a
 * control would drive the terminal, a newline or tab would break the columns.
 */
export function printTable(headers: string[], rows: string[][]): void {
  const cells = rows.map((r) => r.map((cell) => flatText(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (row: string[]) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  process.stdout.write(`${[line(headers), ...cells.map(line)].join('\n')}\n`);
}

/**
 * Validation details, one per line: `  settings.widget.title: …`. `prefix` names what was checked
 * (`settings`); a detail about the whole value (an unknown key at the top) is shown under the prefix
 * alone, or `(body)` without one.
 */
export function formatDetails(details: ErrorDetail[], prefix = ''): string[] {
  return details.map((d) => `  ${[prefix, d.path].filter(Boolean).join('.') || '(body)'}: ${d.message}`);
}

/** zod issues as error details (dot paths). */
export function issueDetails(issues: z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * Parses command-line input with the admin API's own schema: what the API would answer 400 for is
 * a usage error here (exit 2), listed in full.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, usage: string, what: string, prefix = ''): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError([`Invalid ${what}:`, ...formatDetails(issueDetails(parsed.error.issues), prefix)].join('\n'), usage);
}

/**
 * The text of a file the command reads (`-`: standard input), as UTF-8 without the byte order mark
 * that editors on Windows put before UTF-8: it is not part of the JSON or the text. Every file the
 * CLI reads as JSON or as text goes through here; read errors are left to the caller.
 */
export function readTextFile(path: string): string {
  return readFileSync(path === '-' ? 0 : path, 'utf8').replace(/^\uFEFF/, '');
}

/** A JSON option's value, or a usage error naming the option. */
export function jsonOption(raw: string, flag: string, usage: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new UsageError(`--${flag} is not valid JSON`, usage);
  }
}

/** A whole-number option (undefined when absent), or a usage error naming it. */
export function intOption(parsed: ParsedCommand, flag: string, usage: string): number | undefined {
  return wholeNumber(option(parsed, flag), flag, usage);
}

/** A whole number written in decimal digits (not "0x10", "1e3" or ""), or a usage error naming the option. */
export function wholeNumber(value: string | undefined, flag: string, usage: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new UsageError(`--${flag} must be a whole number`, usage);
  return n;
}
