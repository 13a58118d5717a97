import type { LiveState } from '../../lib/live';

/** Says whether the page follows changes as they happen (a polite live region: announced, never stealing focus). */
export function LiveNote({ live }: { live: LiveState }) {
  const text = live === 'live' ? 'Live: updates as it happens' : live === 'connecting' ? 'Connecting to live updates…' : live === 'reconnecting' ? 'Reconnecting to live updates…' : 'Not live: reload the page to see changes';
  return (
    <p className="live-note muted small" role="status" data-live={live}>
      {text}
    </p>
  );
}
