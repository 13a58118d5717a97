/**
 * What survives a reload, in localStorage, one slot per (project key, user): the conversation the
 * visitor was in. The slot name includes the user id (or "anon"), so two people signing in on one
 * browser never pick up each other's conversation; `reset()` clears the slots it knows about.
 */
export interface SavedState {
  conversationId: string;
}

const PREFIX = 'answerdesk:v1';

/** Short stable tag (FNV-1a) of the API key: slot names stay short and the key itself is not repeated. */
function tag(value: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

export function slotName(apiKey: string, userId: string | null): string {
  return `${PREFIX}:${tag(apiKey)}:${userId === null ? 'anon' : `u:${encodeURIComponent(userId)}`}`;
}

/** Storage can be missing or throw (private mode, disabled cookies, sandboxed iframes): then nothing persists. */
function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export function loadState(apiKey: string, userId: string | null): SavedState | null {
  try {
    const raw = storage()?.getItem(slotName(apiKey, userId));
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<SavedState>;
    return typeof parsed.conversationId === 'string' && parsed.conversationId ? { conversationId: parsed.conversationId } : null;
  } catch {
    return null;
  }
}

export function saveState(apiKey: string, userId: string | null, state: SavedState): void {
  try {
    storage()?.setItem(slotName(apiKey, userId), JSON.stringify(state));
  } catch {
    // Quota or privacy mode: the conversation still works, it just will not come back after a reload.
  }
}

export function clearState(apiKey: string, userId: string | null): void {
  try {
    storage()?.removeItem(slotName(apiKey, userId));
  } catch {
    // Nothing stored, nothing to clear.
  }
}
