import { z } from 'zod';

/**
 * A whole-number query parameter (`?limit=`, `?days=`) from `min` to `max`, `fallback` when absent.
 * Only decimal digits are a number here: `z.coerce.number()` alone reads `0x10` as 16, `1e1` as 10,
 * `0b11` as 3 and an empty value as 0, and calls a repeated parameter "NaN". The admin API and the
 * CLI (which passes its options through the same schemas) refuse those with words that say why.
 * Documented as the integer it stands for.
 */
export function wholeNumberParam(min: number, max: number, fallback: number) {
  return z.preprocess((value, ctx) => {
    if (value === undefined || typeof value === 'number') return value;
    if (Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be given once' });
      return z.NEVER;
    }
    if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
    ctx.addIssue({ code: 'custom', message: 'must be a whole number written in decimal digits' });
    return z.NEVER;
  }, z.number().int().min(min).max(max).default(fallback));
}
