/** PageContext of the send-message request, with the spec's bounds. */
export interface PageContext {
  url?: string;
  title?: string;
  description?: string;
  referrer?: string;
  headings?: string[];
  buttons?: string[];
  links?: Array<{ href: string; text: string }>;
  formFields?: Array<{ name: string; type: string; label: string; placeholder: string }>;
}

const MAX_HEADINGS = 30;
const MAX_BUTTONS = 30;
const MAX_LINKS = 80;
const MAX_HREF = 2048;
const MAX_FIELDS = 20;
const MAX_TEXT = 200;

/** Field types whose very presence is fine to mention but whose labels/placeholders could echo secrets are skipped. */
const SKIPPED_FIELD_TYPES = new Set(['password', 'hidden', 'submit', 'button', 'reset', 'image', 'file']);

function clean(text: string | null | undefined, max = MAX_TEXT): string {
  return (text ?? '').replace(/\s+/g, ' ').trim().slice(0, max);
}

/** Hidden by the page (display:none, hidden attribute, aria-hidden): the visitor does not see it either. */
function isHidden(el: Element): boolean {
  if (el.closest('[hidden],[aria-hidden="true"]')) return true;
  return (el as HTMLElement).offsetParent === null && getComputedStyle(el).position !== 'fixed';
}

function labelOf(field: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): string {
  const aria = field.getAttribute('aria-label');
  if (aria) return clean(aria);
  const byId = field.getAttribute('aria-labelledby');
  if (byId) {
    const text = byId
      .split(/\s+/)
      .map((id) => {
        const el = field.ownerDocument.getElementById(id);
        return el ? textWithoutControls(el) : '';
      })
      .join(' ');
    if (clean(text)) return clean(text);
  }
  const labels = field.labels ? Array.from(field.labels).map(textWithoutControls) : [];
  return clean(labels.join(' '));
}

/**
 * A label's words without the controls it may wrap: a textarea's text is its value and a select's
 * options name the choices, so both are removed from a copy before reading it.
 */
function textWithoutControls(label: Element): string {
  const copy = label.cloneNode(true) as Element;
  for (const control of Array.from(copy.querySelectorAll('input, select, textarea, button, output'))) control.remove();
  return copy.textContent ?? '';
}

/**
 * What the agent may know about the page the visitor is on: title, address, description, referrer,
 * headings, button and link texts, and the labels of form fields. Never a field's value, never
 * anything about password fields, never the text the visitor typed. The widget's own DOM lives in a
 * shadow root and is not visible to these queries.
 */
export function collectPageContext(doc: Document = document): PageContext {
  const context: PageContext = {};
  // The fragment often carries state or tokens (OAuth implicit flow, SPA routes); the query is part of the page's address.
  const url = doc.location ? doc.location.href.split('#')[0] : '';
  if (url) context.url = url.slice(0, MAX_HREF);
  if (clean(doc.title)) context.title = clean(doc.title, 500);
  const description = doc.querySelector('meta[name="description"]')?.getAttribute('content');
  if (clean(description)) context.description = clean(description, 1000);
  if (doc.referrer) context.referrer = doc.referrer.slice(0, MAX_HREF);

  const headings = uniq(
    Array.from(doc.querySelectorAll('h1, h2, h3'))
      .filter((el) => !isHidden(el))
      .map((el) => clean(el.textContent)),
  ).slice(0, MAX_HEADINGS);
  if (headings.length) context.headings = headings;

  const buttons = uniq(
    Array.from(doc.querySelectorAll('button, [role="button"], input[type="submit"], input[type="button"]'))
      .filter((el) => !isHidden(el))
      .map((el) => clean(el.getAttribute('aria-label') || (el instanceof HTMLInputElement ? el.getAttribute('value') : el.textContent))),
  ).slice(0, MAX_BUTTONS);
  if (buttons.length) context.buttons = buttons;

  const seen = new Set<string>();
  const links: Array<{ href: string; text: string }> = [];
  for (const a of Array.from(doc.querySelectorAll<HTMLAnchorElement>('a[href]'))) {
    if (links.length >= MAX_LINKS) break;
    const href = a.href;
    if (!/^https?:/i.test(href) || href.length > MAX_HREF || seen.has(href) || isHidden(a)) continue;
    const text = clean(a.getAttribute('aria-label') || a.textContent);
    if (!text) continue;
    seen.add(href);
    links.push({ href, text });
  }
  if (links.length) context.links = links;

  const fields: NonNullable<PageContext['formFields']> = [];
  for (const field of Array.from(doc.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea'))) {
    if (fields.length >= MAX_FIELDS) break;
    const type = field instanceof HTMLInputElement ? (field.type || 'text').toLowerCase() : field.tagName.toLowerCase();
    if (SKIPPED_FIELD_TYPES.has(type) || isHidden(field)) continue;
    // autocomplete="current-password"/"one-time-code" marks secrets even on fields not typed as password.
    if (/password|one-time-code|cc-/i.test(field.getAttribute('autocomplete') ?? '')) continue;
    fields.push({
      name: clean(field.getAttribute('name'), 100),
      type,
      label: labelOf(field),
      placeholder: clean(field.getAttribute('placeholder')),
    });
  }
  if (fields.length) context.formFields = fields;
  return context;
}

function uniq(values: string[]): string[] {
  return Array.from(new Set(values.filter(Boolean)));
}
