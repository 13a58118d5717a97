import { useEffect, useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';

/** A yyyy-mm-dd text naming a real calendar day (2024-02-30 does not). */
export function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const day = new Date(`${text}T00:00:00.000Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

/**
 * Guards a page whose address carries days (`?from=2024-05-01`): a parameter of `names` that is not
 * a real day (a link edited by hand, cut short in a message) is taken out of the address before the
 * page reads it, and a note says what was left out. The page then shows what it would without it,
 * instead of failing on a date it cannot turn into a time.
 */
export function DaysInAddress({ names, children }: { names: string[]; children: ReactNode }) {
  const [params, setParams] = useSearchParams();
  const [dropped, setDropped] = useState<{ note: string; search: string } | null>(null);
  const bad = names.filter((name) => {
    const value = params.get(name);
    return value !== null && value !== '' && !isDay(value);
  });
  const badKey = bad.join(',');

  useEffect(() => {
    if (!badKey) return;
    const next = new URLSearchParams(params);
    for (const name of badKey.split(',')) next.delete(name);
    const what = badKey.split(',').map((name) => `${name}=“${params.get(name)}”`);
    const note = what.length > 1 ? `${what.join(' and ')} in the address are not dates (yyyy-mm-dd): they were left out.` : `${what[0]} in the address is not a date (yyyy-mm-dd): it was left out.`;
    setDropped({ note, search: next.toString() });
    setParams(next, { replace: true });
  }, [badKey, params, setParams]);

  if (badKey) return null;
  return (
    <>
      {/* Shown while the address is the one it was mended to; any later change of filters ends it. */}
      {dropped && dropped.search === params.toString() ? (
        <p className="notice" role="status">
          {dropped.note}
        </p>
      ) : null}
      {children}
    </>
  );
}
