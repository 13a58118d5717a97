import { storable, storableDeep } from '../lib/nul.js';
import { charsetOf, encodingOf } from '../lib/text-encoding.js';
import type { SecretMasker } from './masking.js';

/** Bytes read from an action endpoint at most; the rest of a larger response is dropped. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Characters of response text handed to the model at most (tool results travel in every later step). */
export const MAX_MODEL_CHARS = 8000;

/** Ends a text that was cut to fit. */
export const TRUNCATION_NOTE = '\n…[truncated]';

/** Decodes the body with the charset the response names (one TextDecoder knows), UTF-8 otherwise. */
export function decodeBody(body: Buffer, contentType: string | null): string {
  return new TextDecoder(encodingOf(charsetOf(contentType)) ?? 'utf-8').decode(body);
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

/** A response body once every secret in it is masked (and U+0000 removed: it cannot be stored). */
export interface MaskedBody {
  /** The body as it arrived, masked; re-serialized from `json` when masking the text missed something the decoded value showed. */
  text: string;
  /** The parsed body with every string masked, when it is JSON. */
  json: { value: unknown } | null;
}

/**
 * Masks a response body twice: on the text as it arrived (escaped, percent-encoded or base64 forms
 * of a secret included), and, when it is JSON, on the decoded value the model reads, so a secret
 * escaped twice (JSON text inside a JSON string) is caught as well. A JSON body that arrived cut
 * (over 1 MiB) cannot be parsed and is treated as text.
 */
export function maskBody(raw: string, contentType: string | null, masker: SecretMasker): MaskedBody {
  const text = storable(masker.maskText(raw));
  const trimmed = text.trim();
  if (isJsonType(contentType) || /^[[{]/.test(trimmed)) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      const value = storableDeep(masker.maskValue(parsed));
      // The decoded pass found what the text pass did not: show the masked value, not the text.
      const same = JSON.stringify(value) === JSON.stringify(parsed);
      return { text: same ? text : JSON.stringify(value), json: { value } };
    } catch {
      // Not JSON after all (or cut short): text.
    }
  }
  return { text, json: null };
}

/**
 * What the model reads of a (masked) response: JSON pretty-printed when that fits, compacted when
 * not, and any text with runs of blank space collapsed; always at most MAX_MODEL_CHARS characters.
 */
export function textForModel(body: MaskedBody, max = MAX_MODEL_CHARS): { text: string; cut: boolean } {
  if (body.json) {
    const pretty = JSON.stringify(body.json.value, null, 2);
    if (pretty.length <= max) return { text: pretty, cut: false };
    return cap(JSON.stringify(body.json.value), max);
  }
  const text = body.text
    .trim()
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n');
  return cap(text, max);
}
