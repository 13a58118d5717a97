/** Bytes read from an action endpoint at most; the rest of a larger response is dropped. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Characters of response text handed to the model at most (tool results travel in every later step). */
export const MAX_MODEL_CHARS = 8000;

/** Ends a text that was cut to fit. */
export const TRUNCATION_NOTE = '\n…[truncated]';

/** Decodes the body with the charset the response names, UTF-8 otherwise. */
export function decodeBody(body: Buffer, contentType: string | null): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function isJsonType(contentType: string | null): boolean {
  return /^application\/([\w.+-]+\+)?json\b/i.test(contentType ?? '') || /\/json\b/i.test(contentType ?? '');
}

/** Cuts text to `max` characters without splitting a surrogate pair, marking the cut. */
function cap(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let end = max - TRUNCATION_NOTE.length;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end) + TRUNCATION_NOTE, cut: true };
}

/**
 * What the model reads of a response: JSON pretty-printed when that fits, compacted when not, and
 * any text with runs of blank space collapsed; always at most MAX_MODEL_CHARS characters. A JSON
 * body that arrived cut (over 1 MiB) cannot be parsed and is handed over as text.
 */
export function textForModel(raw: string, contentType: string | null, max = MAX_MODEL_CHARS): { text: string; cut: boolean } {
  const trimmed = raw.trim();
  if (isJsonType(contentType) || /^[[{]/.test(trimmed)) {
    try {
      const value: unknown = JSON.parse(trimmed);
      const pretty = JSON.stringify(value, null, 2);
      if (pretty.length <= max) return { text: pretty, cut: false };
      return cap(JSON.stringify(value), max);
    } catch {
      // Not JSON after all (or cut short): fall through to text.
    }
  }
  const text = trimmed
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n');
  return cap(text, max);
}
