import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { Field, FormError, Loading, QueryError, useDocumentTitle } from '../components/ui';
import { useSignedIn } from '../lib/auth';

/** An invite link: the invited person picks their name and password, and is signed in. */
export function Invite() {
  useDocumentTitle('Join');
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const signedIn = useSignedIn();
  const [form, setForm] = useState({ name: '', password: '' });
  const invite = useQuery({
    queryKey: ['auth', 'invite', token],
    enabled: !!token,
    retry: false,
    queryFn: async () => unwrap(await api.GET('/api/v1/auth/invite', { params: { query: { token } } })),
  });
  const accept = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/auth/invite', { body: { token, ...form } })),
    onSuccess: () => signedIn(),
  });
  const err = accept.error instanceof ApiError ? accept.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate();
  };
  return (
    <main className="auth-page">
      <div className="card">
        <h1>Join AnswerDesk</h1>
        {!token ? <p className="form-error">This page needs the invite link you were given (it ends in <code>?token=…</code>).</p> : null}
        {invite.isPending && token ? <Loading /> : null}
        {invite.isError ? (
          <>
            <QueryError error={invite.error} />
            <p>
              Ask the person who invited you for a new link, or <Link to="/login">sign in</Link>.
            </p>
          </>
        ) : null}
        {invite.data ? (
          <form className="stack" onSubmit={submit} noValidate>
            <p>
              You were invited as <strong>{invite.data.email}</strong>. Choose your name and password.
            </p>
            <Field label="Name" error={err?.fieldError('name')}>
              {(p) => <input {...p} type="text" autoComplete="name" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />}
            </Field>
            <Field label="Password" hint="At least 10 characters." error={err?.fieldError('password')}>
              {(p) => <input {...p} type="password" autoComplete="new-password" required value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />}
            </Field>
            <FormError error={accept.error} />
            <button type="submit" disabled={accept.isPending}>
              Create my account
            </button>
          </form>
        ) : null}
      </div>
    </main>
  );
}
