/**
 * Reading a document's bytes as text the way a browser does (the WHATWG Encoding Standard's
 * sniffing, in the parts documents use): a byte order mark first, then the charset the response
 * names, then, for HTML, the `<meta charset>` in its first 1,024 bytes, then UTF-16 by its zero
 * bytes when it has no mark, then UTF-8 when the bytes are valid UTF-8, and windows-1252 otherwise
 * (the web's fallback for unlabelled Western text; it also reads ISO-8859-1). Node's TextDecoder
 * does the decoding and knows the standard's labels.
 */

const BOMS: Array<[number[], string]> = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

/** The encoding a label names, as TextDecoder canonicalises it, or undefined for a label it does not know. */
export function encodingOf(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/** The `charset` parameter of a Content-Type value. */
export function charsetOf(contentType: string | null | undefined): string | undefined {
  return /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? '')?.[1];
}

/**
 * The charset an HTML document declares in its first 1,024 bytes: `<meta charset="…">` or
 * `<meta http-equiv="Content-Type" content="…; charset=…">`. A declared UTF-16 means UTF-8, as the
 * standard says (a page that really were UTF-16 would have needed a byte order mark to get there).
 */
function metaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString('latin1');
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const encoding = encodingOf(/charset\s*=\s*["']?\s*([^"'\s;/>]+)/i.exec(tag)?.[1]);
    if (!encoding) continue;
    if (encoding.startsWith('utf-16')) return 'utf-8';
    return encoding === 'x-user-defined' ? 'windows-1252' : encoding;
  }
  return undefined;
}

/**
 * UTF-16 saved without a byte order mark (some Windows tools write it so): Latin text in it has a zero
 * byte beside every letter, on the same side each time, which neither UTF-8 text nor binary data
 * has. Read from the first 4 KiB.
 */
function utf16WithoutMark(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const pairs = Math.min(bytes.length, 4096) >> 1;
  if (pairs < 2) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs; i++) {
    if (bytes[2 * i] === 0) evenZeros++;
    if (bytes[2 * i + 1] === 0) oddZeros++;
  }
  if (oddZeros >= pairs * 0.3 && evenZeros <= pairs * 0.02) return 'utf-16le';
  if (evenZeros >= pairs * 0.3 && oddZeros <= pairs * 0.02) return 'utf-16be';
  return undefined;
}

/** Whether the bytes are valid UTF-8. */
function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The text of a document's bytes: by its byte order mark, the charset `contentType` names, an HTML
 * document's own declaration (`html`), UTF-16 by its zero bytes, or else UTF-8 when the bytes are
 * valid UTF-8 and windows-1252 when they are not. A byte order mark is not part of the text.
 */
export function decodeDocument(bytes: Uint8Array, contentType: string | null, html = false): string {
  for (const [mark, encoding] of BOMS) {
    if (mark.every((b, i) => bytes[i] === b)) return new TextDecoder(encoding).decode(bytes.subarray(mark.length));
  }
  const declared = encodingOf(charsetOf(contentType)) ?? (html ? metaCharset(bytes) : undefined);
  // A label of UTF-8 on bytes that are not is believed, as browsers do: the invalid bytes read as U+FFFD.
  const encoding = declared ?? utf16WithoutMark(bytes) ?? (isUtf8(bytes) ? 'utf-8' : 'windows-1252');
  const text = new TextDecoder(encoding).decode(bytes);
  return encoding === 'windows-1252' ? windows1252(text) : text;
}

/**
 * Bytes 0x80–0x9F as windows-1252 has them (€, curly quotes, dashes, Œ…). Node's TextDecoder reads
 * that label as ISO-8859-1, leaving C1 control characters where the standard puts these; the five
 * bytes windows-1252 leaves undefined stay as their control characters, as the standard says.
 */
const CP1252 = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
const windows1252 = (text: string) => text.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]!);

/** Control characters a text may hold, however short, and still be read as text. */
const STRAY_CONTROLS = 8;

/** Tab, line feed, vertical tab, form feed, carriage return and escape (terminal colours in a log). */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b]);

/**
 * Whether decoded text is binary data rather than a document: more than one character in a hundred
 * (and more than STRAY_CONTROLS) is a control character that text does not use (U+0000 and the
 * like; TEXT_CONTROLS are text's). An image, an archive or an executable read as text is full of
 * them (about one byte in ten of random data); a document in any encoding has none, or a stray one
 * (a short note with a U+0000 in it, dropped when it is stored).
 */
export function looksBinary(text: string): boolean {
  const limit = Math.max(text.length / 100, STRAY_CONTROLS);
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && !TEXT_CONTROLS.has(c)) || c === 0x7f) {
      if (++controls > limit) return true;
    }
  }
  return false;
}
