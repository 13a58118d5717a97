/** Shown instead of a secret value wherever a response would have shown it. */
export const MASK = '********';

/**
 * Values under this many characters are left alone: masking every "1" in a response would make it
 * unreadable, and a secret that short is not one.
 */
export const MIN_MASKED_LENGTH = 4;

/** A base64 piece shorter than this is too likely to occur by chance to be masked on its own. */
const MIN_BASE64_PIECE = 6;

const JSON_SHORT: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;
const HEX2 = /^[0-9a-fA-F]{2}$/;

/** How many bytes a UTF-8 sequence starting with `lead` has (0: not a lead byte). */
const utf8Length = (lead: number) => (lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xf0 && lead < 0xf5 ? 4 : 0);

/**
 * `text` with one level of escaping undone, wherever it appears and in any mix: JSON escapes
 * (`\uXXXX` in either case, `\/`, `\"`…) and percent-encoded UTF-8 (`%XX`, either case); and `+`
 * folded into a space, as form encoding writes a space. `starts[i]` is where the i-th character of
 * the result begins in `text` (`starts[length]` is `text.length`), so a match in the result maps back.
 */
function unescapeMapped(text: string): { text: string; starts: Int32Array } {
  const out: string[] = [];
  const starts = new Int32Array(text.length + 1);
  let n = 0;
  const emit = (chars: string, at: number) => {
    out.push(chars === '+' ? ' ' : chars);
    for (let k = 0; k < chars.length; k++) starts[n++] = at;
  };
  const special = /[\\%+]/g;
  let i = 0;
  while (i < text.length) {
    // Plain characters in one piece, up to the next one that may start an escape.
    special.lastIndex = i;
    const stop = special.exec(text)?.index ?? text.length;
    if (stop > i) {
      out.push(text.slice(i, stop));
      for (; i < stop; i++) starts[n++] = i;
      if (i === text.length) break;
    }
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      const next = text[i + 1]!;
      if (next === 'u' && HEX4.test(text.slice(i + 2, i + 6))) {
        emit(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), i);
        i += 6;
        continue;
      }
      if (JSON_SHORT[next]) {
        emit(JSON_SHORT[next]!, i);
        i += 2;
        continue;
      }
    }
    if (c === '%' && HEX2.test(text.slice(i + 1, i + 3))) {
      const lead = parseInt(text.slice(i + 1, i + 3), 16);
      const length = utf8Length(lead);
      const bytes = [lead];
      for (let k = 1; k < length; k++) {
        const at = i + 3 * k;
        if (text[at] !== '%' || !HEX2.test(text.slice(at + 1, at + 3))) break;
        bytes.push(parseInt(text.slice(at + 1, at + 3), 16));
      }
      const decoded = length > 0 && bytes.length === length ? utf8(bytes) : null;
      if (decoded !== null) {
        emit(decoded, i);
        i += 3 * length;
        continue;
      }
    }
    emit(c, i);
    i += 1;
  }
  starts[n] = text.length;
  return { text: out.join(''), starts: starts.subarray(0, n + 1) };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
function utf8(bytes: number[]): string | null {
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/**
 * The base64 texts that give `value` away: its standard and URL-safe encodings, padded as a whole
 * value, and the pieces that encode it inside a longer base64 text (as in a Basic credential), for
 * each of the three positions it can start at within a 3-byte group. A piece leaves out the
 * characters that also carry bits of the neighbouring bytes.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = [bytes.toString('base64')];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64').replace(/=+$/, '');
    const lead = shift === 0 ? 0 : shift + 1;
    const trail = (shift + bytes.length) % 3 === 0 ? 0 : 1;
    const piece = encoded.slice(lead, encoded.length - trail);
    if (piece.length >= MIN_BASE64_PIECE) forms.push(piece);
  }
  return forms.flatMap((f) => [f, f.replace(/\+/g, '-').replace(/\//g, '_')]);
}

/**
 * Masks secret values wherever they show: as written, JSON-escaped (`\/`, `\uXXXX`, in any mix),
 * percent- or form-encoded, and base64 (standard or URL-safe, whole or inside a longer base64
 * text). {@link SecretMasker.maskText} works on a text as it arrived, undoing one level of escaping
 * to find a value; {@link SecretMasker.maskValue} masks a parsed JSON value, so a value escaped
 * twice (JSON text inside a JSON string) is found in the strings the model reads.
 */
export class SecretMasker {
  /** What a secret looks like once one level of escaping is undone, longest first. */
  private readonly targets: string[];

  constructor(values: Iterable<string>) {
    const targets = new Set<string>();
    for (const value of values) {
      if (value.length < MIN_MASKED_LENGTH) continue;
      // The value itself (found once its encoding is undone), and the value as its own text (found
      // when it was written as is, even if it looks escaped: `%41` stays `%41`).
      for (const form of [value, ...base64Forms(value)]) {
        targets.add(form.replace(/\+/g, ' '));
        targets.add(unescapeMapped(form).text);
      }
    }
    this.targets = [...targets].filter((t) => t.length > 0).sort((a, b) => b.length - a.length);
  }

  /** Nothing to mask. */
  get empty(): boolean {
    return this.targets.length === 0;
  }

  /** `text` with every occurrence of a secret, in any of the forms above, replaced by the mask. */
  maskText(text: string): string {
    if (this.targets.length === 0 || text.length < MIN_MASKED_LENGTH) return text;
    const plain = unescapeMapped(text);
    const spans: Array<[number, number]> = [];
    for (const target of this.targets) {
      for (let at = plain.text.indexOf(target); at !== -1; at = plain.text.indexOf(target, at + target.length)) {
        spans.push([plain.starts[at]!, plain.starts[at + target.length]!]);
      }
    }
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0]);
    let out = '';
    let last = 0;
    for (const [start, end] of spans) {
      if (end <= last) continue;
      out += text.slice(last, Math.max(start, last)) + (start >= last ? MASK : '');
      last = end;
    }
    return out + text.slice(last);
  }

  /** A copy of a parsed JSON value with every string (and object key) masked. */
  maskValue(value: unknown): unknown {
    if (this.targets.length === 0) return value;
    if (typeof value === 'string') return this.maskText(value);
    if (Array.isArray(value)) return value.map((v) => this.maskValue(v));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.maskText(k), this.maskValue(v)]));
    }
    return value;
  }
}
