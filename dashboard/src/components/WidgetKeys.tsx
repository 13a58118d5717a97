import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../api/client';
import { ConfirmButton } from './kit/kit';
import { Field, formatDateTime, FormError, QueryStatus } from './ui';

/** Shown once: a key or secret the server keeps only as a hash. */
function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div className="notice" role="status">
      <p>
        {label} — copy it now, it is shown only once:
      </p>
      <pre>
        <code>{value}</code>
      </pre>
    </div>
  );
}

function snippet(origin: string, publicKey: string): string {
  return `<script src="${origin}/widget.js"></script>
<script>
  AnswerDesk.initAsync({
    apiUrl: '${origin}/api/v1',
    apiKey: '${publicKey}',
    // Signed-in visitors (optional): user: { id, email, name, hmac }
  });
</script>`;
}

const HMAC_EXAMPLE = `// On your server (Node.js): sign the visitor's id with the project's HMAC secret.
import { createHmac } from 'node:crypto';
const hmac = createHmac('sha256', process.env.ANSWERDESK_HMAC_SECRET).update(user.id).digest('hex');
// Then in the page: AnswerDesk.initAsync({ ..., user: { id: user.id, email, name, hmac } })`;

/** The install snippet, the project's keys (create, revoke) and its HMAC secret (rotate). */
export function WidgetKeys({ projectId, canConfigure }: { projectId: string; canConfigure: boolean }) {
  const queryClient = useQueryClient();
  const keysKey = ['projects', projectId, 'keys'];
  const keys = useQuery({
    queryKey: keysKey,
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/keys', { params: { path: { projectId } } })).keys,
  });
  const [kind, setKind] = useState<'public' | 'secret'>('public');
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/keys', { params: { path: { projectId } }, body: { kind, ...(name.trim() ? { name: name.trim() } : {}) } })),
    onSuccess: () => {
      setName('');
      void queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const revoke = useMutation({
    mutationFn: async (keyId: string) => unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/keys/{keyId}', { params: { path: { projectId, keyId } } })),
    onSuccess: (_, keyId) => {
      // A revoked key must not stay on screen to be copied: neither in the snippet nor as "copy it now".
      if (create.data?.key.id === keyId) create.reset();
      void queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const [confirmRotate, setConfirmRotate] = useState(false);
  const rotate = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/hmac-secret/rotate', { params: { path: { projectId } } })),
    onSuccess: () => setConfirmRotate(false),
  });
  const createErr = create.error instanceof ApiError ? create.error : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  // The key just created, unless the list says it has been revoked since (here or elsewhere).
  const created = create.data && !keys.data?.some((k) => k.id === create.data.key.id && k.revokedAt) ? create.data : undefined;
  const newPublic = created && created.key.kind === 'public' ? created.secret : null;
  const activePublic = keys.data?.find((k) => k.kind === 'public' && !k.revokedAt);

  return (
    <>
      <section className="card" aria-labelledby="install-title">
        <h2 id="install-title">Install</h2>
        <p>Paste this before the closing &lt;/body&gt; tag of every page where the widget should appear.</p>
        <pre>
          <code>{snippet(location.origin, newPublic ?? (activePublic ? `${activePublic.prefix} (your full public key)` : 'ad_pk_… (create a public key below)'))}</code>
        </pre>
        <p className="muted">
          Keys are stored only as hashes, so the full public key is shown once, when it is created; the snippet fills it in when you create one here.
        </p>
        <h3>Verified visitors (HMAC)</h3>
        <p>To tie conversations to your signed-in users, sign each user's id on your server with the project's HMAC secret and pass the signature as <code>hmac</code>:</p>
        <pre>
          <code>{HMAC_EXAMPLE}</code>
        </pre>
      </section>

      <section className="card stack" aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        <p className="muted">
          Public keys (ad_pk_…) go in web pages. Secret keys (ad_sk_…) administer the project from your servers: never put one in a page. Revoking a key
          stops it at once, on every site or server that uses it.
        </p>
        <QueryStatus query={keys} />
        {keys.data ? (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Name</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((k) => (
                  <tr key={k.id}>
                    <td>
                      <code>{k.prefix}</code>
                    </td>
                    <td>{k.kind}</td>
                    <td>{k.name ?? '—'}</td>
                    <td>{formatDateTime(k.createdAt)}</td>
                    <td>{formatDateTime(k.lastUsedAt)}</td>
                    <td>
                      {k.revokedAt ? (
                        <span className="badge bad">Revoked</span>
                      ) : (
                        <ConfirmButton
                          label="Revoke"
                          name={`Revoke ${k.prefix}`}
                          confirmLabel={`Yes, revoke ${k.prefix}`}
                          disabled={!canConfigure}
                          busy={revoke.isPending && revoke.variables === k.id}
                          onConfirm={() => revoke.mutate(k.id)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <FormError error={revoke.error} />
        <form className="stack" onSubmit={submit} noValidate aria-label="Create a key">
          <div className="grid-2">
            <Field label="Kind">
              {(p) => (
                <select {...p} value={kind} onChange={(e) => setKind(e.target.value as 'public' | 'secret')} disabled={!canConfigure}>
                  <option value="public">Public (widget)</option>
                  <option value="secret">Secret (server)</option>
                </select>
              )}
            </Field>
            <Field label="Key name" hint="Optional, to tell keys apart." error={createErr?.fieldError('name')}>
              {(p) => <input {...p} type="text" value={name} onChange={(e) => setName(e.target.value)} readOnly={!canConfigure} />}
            </Field>
          </div>
          <FormError error={create.error} />
          {created ? <ShownOnce label={`New ${created.key.kind} key ${created.key.prefix}`} value={created.secret} /> : null}
          <div>
            <button type="submit" disabled={!canConfigure || create.isPending}>
              Create key
            </button>
          </div>
        </form>
      </section>

      <section className="card stack" aria-labelledby="hmac-title">
        <h2 id="hmac-title">HMAC secret</h2>
        <p>
          Rotating makes a new secret at once: signatures and identity tokens made with the old one stop verifying, so update your servers right after.
        </p>
        {rotate.data ? <ShownOnce label="New HMAC secret" value={rotate.data.hmacSecret} /> : null}
        <FormError error={rotate.error} />
        {confirmRotate ? (
          <div className="row">
            <button type="button" className="danger" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
              Yes, rotate the HMAC secret
            </button>
            <button type="button" className="secondary" onClick={() => setConfirmRotate(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <div>
            <button type="button" className="secondary" disabled={!canConfigure} onClick={() => setConfirmRotate(true)}>
              Rotate HMAC secret
            </button>
          </div>
        )}
      </section>
    </>
  );
}
