import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { Field, FormError, Loading, QueryError, useDocumentTitle } from '../components/ui';
import { useSignedIn } from '../lib/auth';

/** First run: the link the server prints creates the first owner, once. */
export function Setup() {
  useDocumentTitle('Set up');
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const signedIn = useSignedIn();
  const [form, setForm] = useState({ email: '', name: '', password: '' });
  const status = useQuery({ queryKey: ['auth', 'setup'], queryFn: async () => unwrap(await api.GET('/api/v1/auth/setup')) });
  const setup = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/auth/setup', { body: { token, ...form } })),
    onSuccess: () => signedIn(),
  });
  const err = setup.error instanceof ApiError ? setup.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setup.mutate();
  };
  return (
    <main className="auth-page">
      <div className="card">
        <h1>Set up AnswerDesk</h1>
        {status.isPending ? <Loading /> : null}
        {status.isError ? <QueryError error={status.error} /> : null}
        {status.data && !status.data.required ? (
          <p className="notice">
            Setup is done: an owner exists. <Link to="/login">Sign in</Link>
          </p>
        ) : null}
        {status.data?.required ? (
          <form className="stack" onSubmit={submit} noValidate>
            <p className="muted">Create the first account. It owns this instance: it manages projects and invites the rest of the team.</p>
            {!token ? <p className="form-error">This page needs the setup link printed by the server (it ends in <code>?token=…</code>).</p> : null}
            <Field label="Email" error={err?.fieldError('email')}>
              {(p) => <input {...p} type="email" autoComplete="username" required value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />}
            </Field>
            <Field label="Name" error={err?.fieldError('name')}>
              {(p) => <input {...p} type="text" autoComplete="name" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />}
            </Field>
            <Field label="Password" hint="At least 10 characters." error={err?.fieldError('password')}>
              {(p) => <input {...p} type="password" autoComplete="new-password" required value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />}
            </Field>
            <FormError error={setup.error} />
            <button type="submit" disabled={setup.isPending || !token}>
              Create owner account
            </button>
          </form>
        ) : null}
      </div>
    </main>
  );
}
