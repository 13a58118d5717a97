import { describe, expect, it } from 'vitest';
import { charsetOf, decodeDocument, looksBinary } from './text-encoding.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('decodeDocument', () => {
  it('drops a UTF-8 byte order mark and reads UTF-16 by its mark', () => {
    expect(decodeDocument(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Grüße')]), null)).toBe('Grüße');
    expect(decodeDocument(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('Hé', 'utf16le').swap16()]), 'text/plain; charset=iso-8859-1')).toBe('Hé');
  });

  it('believes the charset the response names, then the page, then UTF-8, then windows-1252', () => {
    expect(decodeDocument(bytes('caf\xe9'), 'text/plain; charset="ISO-8859-1"')).toBe('café');
    expect(decodeDocument(Buffer.from('café'), 'text/html; charset=utf-8', true)).toBe('café');
    expect(decodeDocument(bytes('<meta charset=windows-1252><p>\x93quoted\x94 \x80</p>'), 'text/html', true)).toBe('<meta charset=windows-1252><p>“quoted” €</p>');
    // Only an HTML page's own declaration counts, and an unknown label is no declaration.
    expect(decodeDocument(Buffer.from('<meta charset=koi8-r>é'), 'text/plain')).toBe('<meta charset=koi8-r>é');
    expect(decodeDocument(bytes('caf\xe9'), 'text/plain; charset=klingon')).toBe('café');
    // A page that claims UTF-16 without a byte order mark is read as UTF-8, as browsers read it.
    expect(decodeDocument(Buffer.from('<meta charset="utf-16">ü'), 'text/html', true)).toBe('<meta charset="utf-16">ü');
    expect(decodeDocument(Buffer.from('naïve'), null)).toBe('naïve');
    // UTF-16 without its byte order mark, either way round.
    expect(decodeDocument(Buffer.from('Gift cards never expire.', 'utf16le'), null)).toBe('Gift cards never expire.');
    expect(decodeDocument(Buffer.from('Größe', 'utf16le').swap16(), null)).toBe('Größe');
    expect(decodeDocument(bytes('na\xefve \x81'), null)).toBe('naïve \u0081');
  });

  it('reads the charset parameter of a content type', () => {
    expect(charsetOf('text/html; charset=Shift_JIS')).toBe('Shift_JIS');
    expect(charsetOf("text/html;charset='utf-8'")).toBe('utf-8');
    expect(charsetOf('text/html')).toBeUndefined();
  });
});

describe('looksBinary', () => {
  it('tells data from text in any encoding, a stray control character allowed', () => {
    expect(looksBinary('Line one\r\n\tLine two\f\u001b[31mred\u001b[0m')).toBe(false);
    expect(looksBinary(`${'word '.repeat(100)}\u0000`)).toBe(false);
    expect(looksBinary('PNG\u0000\u0000\u0000\rIHDR\u0000\u0000\u0001'.repeat(3))).toBe(true);
    expect(looksBinary('Spare\u0000 parts ship within a week.')).toBe(false);
    expect(looksBinary('')).toBe(false);
  });
});
