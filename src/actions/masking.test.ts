import { describe, expect, it } from 'vitest';
import { ECHO_FORMS, echoedForms, phpJson, unicodeJson, type EchoForm } from '../../test/fakes/action-endpoint.js';
import { MASK, SecretMasker } from './masking.js';

const API_KEY = 'cfg/Key+7f3a "q" \\ <a&b>=';
const USER_TOKEN = 'user/tok+5d2e81==';
const UNICODE_TOKEN = 'pässwörd-🔑-Ω';
const secrets = [API_KEY, USER_TOKEN, UNICODE_TOKEN];
const leaked = (text: string) => secrets.flatMap((s) => echoedForms(s).filter((form) => text.includes(form)));

describe('SecretMasker', () => {
  const masker = new SecretMasker(secrets);
  const headers = { host: '127.0.0.1:5555', 'x-api-key': API_KEY, 'x-customer-token': USER_TOKEN, 'x-other': UNICODE_TOKEN, accept: 'application/json' };

  it.each(Object.keys(ECHO_FORMS) as EchoForm[])('masks every secret in a %s echo on the text as it arrived', (form) => {
    const raw = ECHO_FORMS[form].render(headers);
    expect(leaked(raw).length).toBeGreaterThan(0);
    const masked = masker.maskText(raw);
    expect(leaked(masked)).toEqual([]);
    expect(masked).toContain(MASK);
    // What is not a secret stays as it was.
    expect(masked.length).toBeLessThan(raw.length);
    const host = { 'unicode-json': '127\\u002E0', base64: 'MTI3LjAuMC4x', base64url: 'MTI3LjAuMC4x', basic: 'ZWNobzoxMjcuMC4wLjE6' }[form as string];
    expect(masked).toContain(host ?? '127.0.0.1');
  });

  it('masks a value escaped in any mix of forms, in either hex case', () => {
    const mixed = 'cfg%2fKey\\u002b7f3a%20\\"q\\u0022 \\\\ %3Ca&b\\u003e=';
    expect(masker.maskText(`before ${mixed} after`)).toBe(`before ${MASK} after`);
    const percentLower = encodeURIComponent(UNICODE_TOKEN).toLowerCase();
    expect(masker.maskText(`t=${percentLower}`)).toBe(`t=${MASK}`);
    const escapedPairs = unicodeJson(UNICODE_TOKEN);
    expect(masker.maskText(escapedPairs)).toBe(`"${MASK}"`);
  });

  it('masks base64 of a value wherever it starts inside a longer base64 text', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      for (const encode of [(b: Buffer) => b.toString('base64'), (b: Buffer) => b.toString('base64url')]) {
        const text = encode(Buffer.from(`${prefix}${USER_TOKEN};tail`));
        const masked = masker.maskText(text);
        expect(masked, `${prefix}`).toContain(MASK);
        // At most the two characters on each side that also carry bits of the neighbouring bytes stay.
        expect(masked.length, `${prefix}`).toBeLessThanOrEqual(text.length - Math.floor((USER_TOKEN.length * 4) / 3) + 4 + MASK.length);
      }
    }
  });

  it('masks the decoded value too: a secret escaped twice is found in the string it sits in', () => {
    const twice = phpJson({ log: phpJson({ token: USER_TOKEN }) });
    const value = masker.maskValue(JSON.parse(twice)) as { log: string };
    expect(leaked(JSON.stringify(value))).toEqual([]);
    expect(JSON.parse(value.log)).toEqual({ token: MASK });
    expect(masker.maskValue({ [API_KEY]: [1, null, true, USER_TOKEN] })).toEqual({ [MASK]: [1, null, true, MASK] });
  });

  it('leaves short values and unrelated text alone', () => {
    const short = new SecretMasker(['abc', '']);
    expect(short.empty).toBe(true);
    expect(short.maskText('abc abc')).toBe('abc abc');
    const text = 'Order A-1234 shipped with DHL: 100% on time, \\u0041 + %zz \\q';
    expect(masker.maskText(text)).toBe(text);
  });
});
