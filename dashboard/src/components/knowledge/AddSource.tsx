import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { detailPath, errorsUnder, formLevelError } from '../kit/kit';
import { Field, FormError, plural } from '../ui';
import { FileUpload } from './FileUpload';

type CreateBody = components['schemas']['CreateKnowledgeSourceRequest'];
type Kind = 'text' | 'markdown' | 'faq' | 'url' | 'sitemap' | 'files';

const KINDS: Array<{ kind: Kind; label: string }> = [
  { kind: 'text', label: 'Text' },
  { kind: 'markdown', label: 'Markdown' },
  { kind: 'faq', label: 'FAQ' },
  { kind: 'url', label: 'URL' },
  { kind: 'sitemap', label: 'Sitemap' },
  { kind: 'files', label: 'Files' },
];

interface FaqItem {
  question: string;
  answer: string;
}

/** The FAQ items worth sending (blank ones are left out), each with its place in the form. */
function faqToSend(items: FaqItem[]): { items: FaqItem[]; places: number[] } {
  const places = items.flatMap((item, i) => (item.question.trim() || item.answer.trim() ? [i] : []));
  return { items: places.map((i) => items[i]), places };
}

/**
 * The API's error with `items.N…` paths (N counts the items sent) turned into the places of those
 * items in the form, so a message lands on the item the person sees, blank ones in between or not.
 */
function errorAtPlaces(err: unknown, places: number[]): unknown {
  if (!(err instanceof ApiError) || places.length === 0) return err;
  const details = err.details.map((d) => {
    const path = detailPath(d.path);
    const at = /^items\.(\d+)(?=\.|$)/.exec(path);
    const place = at ? places[Number(at[1])] : undefined;
    return at && place !== undefined ? { ...d, path: `items.${place}${path.slice(at[0].length)}` } : d;
  });
  return new ApiError(err.status, err.message, details);
}

/** What a person reads once a source is accepted: its title, or for an untitled one what it holds. */
function addedMessage(source: { title?: string | null; url?: string | null; type: string }, faqCount: number): string {
  const name = source.title ?? source.url;
  if (source.type === 'faq') {
    const pairs = plural(faqCount, 'question');
    return name ? `Added “${name}” with ${pairs}: it is being read now.` : `FAQ added with ${pairs}: it is being read now.`;
  }
  return name ? `Added “${name}”: it is being read now.` : `${KINDS.find((k) => k.kind === source.type)?.label ?? 'Source'} added: it is being read now.`;
}

/**
 * Adds a source of any kind. Each kind keeps its own inputs while another is shown, and a refused
 * save leaves everything typed in place with the API's message next to the field it names.
 */
export function AddSource({ projectId, canConfigure, onAdded }: { projectId: string; canConfigure: boolean; onAdded: () => void }) {
  const [kind, setKind] = useState<Kind>('text');
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [markdown, setMarkdown] = useState('');
  const [faq, setFaq] = useState<FaqItem[]>([{ question: '', answer: '' }]);
  const [url, setUrl] = useState('');
  const [maxDepth, setMaxDepth] = useState('0');
  const [sitemap, setSitemap] = useState('');
  const [maxPages, setMaxPages] = useState('50');
  const [added, setAdded] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: async (body: CreateBody) => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/knowledge', { params: { path: { projectId } }, body })).source,
    onSuccess: (source, body) => {
      setAdded(addedMessage(source, body.items?.length ?? 0));
      // Only what was saved is cleared; the other kinds keep their drafts.
      if (kind === 'text') setText('');
      if (kind === 'markdown') setMarkdown('');
      if (kind === 'faq') setFaq([{ question: '', answer: '' }]);
      if (kind === 'url') setUrl('');
      if (kind === 'sitemap') setSitemap('');
      setTitle('');
      onAdded();
    },
  });

  const body = (): CreateBody | string => {
    const t = title.trim() ? { title: title.trim() } : {};
    const pages = Number(maxPages);
    switch (kind) {
      case 'text':
        return { type: 'text', content: text, ...t };
      case 'markdown':
        return { type: 'markdown', content: markdown, ...t };
      case 'faq':
        return { type: 'faq', items: faqToSend(faq).items, ...t };
      case 'url':
        return { type: 'url', url: url.trim(), maxDepth: Number(maxDepth), maxPages: pages, ...t };
      case 'sitemap':
        return { type: 'sitemap', url: sitemap.trim(), maxPages: pages, ...t };
      default:
        return 'files';
    }
  };

  // Where each FAQ item sent sat in the form when it was sent, to place the server's errors.
  const [sentPlaces, setSentPlaces] = useState<number[]>([]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAdded(null);
    const b = body();
    if (typeof b === 'string') return;
    setSentPlaces(kind === 'faq' ? faqToSend(faq).places : []);
    create.mutate(b);
  };

  const err = errorAtPlaces(create.error, sentPlaces);
  const fields = ['title', 'content', 'items', 'url', 'maxDepth', 'maxPages', 'type'];
  const disabled = !canConfigure;

  return (
    <section aria-labelledby="add-source-heading" className="card">
      <h2 id="add-source-heading">Add a source</h2>
      <fieldset className="kind-picker">
        <legend>Kind of source</legend>
        {KINDS.map((k) => (
          <label key={k.kind} className="kind-option">
            <input
              type="radio"
              name="source-kind"
              value={k.kind}
              checked={kind === k.kind}
              onChange={() => {
                setKind(k.kind);
                create.reset();
                setAdded(null);
              }}
            />
            {k.label}
          </label>
        ))}
      </fieldset>

      {kind === 'files' ? (
        <FileUpload projectId={projectId} disabled={disabled} onUploaded={onAdded} />
      ) : (
        <form className="stack" onSubmit={submit} noValidate aria-label="Add a source">
          <Field label="Title (optional)" hint="Shown with citations; defaults to the first heading or the page title." error={errorsUnder(err, 'title')}>
            {(p) => <input {...p} type="text" maxLength={300} value={title} onChange={(e) => setTitle(e.target.value)} disabled={disabled} />}
          </Field>
          {kind === 'text' ? (
            <Field label="Text" error={errorsUnder(err, 'content')}>
              {(p) => <textarea {...p} rows={8} value={text} onChange={(e) => setText(e.target.value)} disabled={disabled} />}
            </Field>
          ) : null}
          {kind === 'markdown' ? (
            <Field label="Markdown" hint="Headings become sections the agent can cite." error={errorsUnder(err, 'content')}>
              {(p) => <textarea {...p} rows={10} className="mono" value={markdown} onChange={(e) => setMarkdown(e.target.value)} disabled={disabled} />}
            </Field>
          ) : null}
          {kind === 'faq' ? <FaqEditor items={faq} setItems={setFaq} err={err} disabled={disabled} /> : null}
          {kind === 'url' ? (
            <>
              <Field label="Page URL" hint="A public http(s) page; with a depth above 0 the same site's links are followed." error={errorsUnder(err, 'url')}>
                {(p) => <input {...p} type="url" inputMode="url" placeholder="https://example.com/help" value={url} onChange={(e) => setUrl(e.target.value)} disabled={disabled} />}
              </Field>
              <div className="grid-2">
                <Field label="Link depth" hint="0: this page only; at most 5." error={errorsUnder(err, 'maxDepth')}>
                  {(p) => <input {...p} type="number" min={0} max={5} value={maxDepth} onChange={(e) => setMaxDepth(e.target.value)} disabled={disabled} />}
                </Field>
                <Field label="Maximum pages" error={errorsUnder(err, 'maxPages')}>
                  {(p) => <input {...p} type="number" min={1} max={5000} value={maxPages} onChange={(e) => setMaxPages(e.target.value)} disabled={disabled} />}
                </Field>
              </div>
            </>
          ) : null}
          {kind === 'sitemap' ? (
            <>
              <Field label="Sitemap URL" hint="A sitemap or sitemap index; every listed page of the same site is read." error={errorsUnder(err, 'url')}>
                {(p) => <input {...p} type="url" inputMode="url" placeholder="https://example.com/sitemap.xml" value={sitemap} onChange={(e) => setSitemap(e.target.value)} disabled={disabled} />}
              </Field>
              <Field label="Maximum pages" error={errorsUnder(err, 'maxPages')}>
                {(p) => <input {...p} type="number" min={1} max={5000} value={maxPages} onChange={(e) => setMaxPages(e.target.value)} disabled={disabled} />}
              </Field>
            </>
          ) : null}
          <FormError error={err ? formLevelError(err, fields) : null} />
          {added ? (
            <p className="success" role="status">
              {added}
            </p>
          ) : null}
          <div>
            <button type="submit" disabled={disabled || create.isPending}>
              Add source
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

function FaqEditor({ items, setItems, err, disabled }: { items: FaqItem[]; setItems: (items: FaqItem[]) => void; err: unknown; disabled: boolean }) {
  const update = (i: number, patch: Partial<FaqItem>) => setItems(items.map((item, j) => (j === i ? { ...item, ...patch } : item)));
  const whole = errorsUnder(err, 'items');
  return (
    <fieldset className="faq-items">
      <legend>Questions and answers</legend>
      {items.map((item, i) => (
        <div key={i} className="faq-item">
          <Field label={`Question ${i + 1}`} error={errorsUnder(err, `items.${i}.question`)}>
            {(p) => <input {...p} type="text" value={item.question} onChange={(e) => update(i, { question: e.target.value })} disabled={disabled} />}
          </Field>
          <Field label={`Answer ${i + 1}`} error={errorsUnder(err, `items.${i}.answer`)}>
            {(p) => <textarea {...p} rows={3} value={item.answer} onChange={(e) => update(i, { answer: e.target.value })} disabled={disabled} />}
          </Field>
          {items.length > 1 ? (
            <button type="button" className="link" onClick={() => setItems(items.filter((_, j) => j !== i))} disabled={disabled}>
              Remove question {i + 1}
            </button>
          ) : null}
        </div>
      ))}
      {whole && !items.some((_, i) => errorsUnder(err, `items.${i}`)) ? <p className="field-error">{whole}</p> : null}
      <button type="button" className="secondary" onClick={() => setItems([...items, { question: '', answer: '' }])} disabled={disabled}>
        Add a question
      </button>
    </fieldset>
  );
}
