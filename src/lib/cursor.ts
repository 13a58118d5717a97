import { nulPaths } from './nul.js';

/** An opaque paging cursor: the JSON of `value`, base64url-encoded. */
export function packCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The value a cursor made by {@link packCursor} holds, or undefined when `raw` is not one: not
 * base64url JSON, or holding U+0000, which no cursor of ours has and PostgreSQL cannot compare.
 */
export function unpackCursor(raw: string): unknown {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    return nulPaths(value).length === 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
