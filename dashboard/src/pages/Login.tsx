import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { FormError, useDocumentTitle } from '../components/ui';
import { useSignedIn } from '../lib/auth';

/** A same-app path to go back to after signing in (never another site). */
export function safeNext(next: string | null): string {
  // A path of this site only: browsers read "//host" and "/\host" (a backslash counts as a slash)
  // as another site, which the router refuses to go to, leaving a signed-in user on this form.
  return next && next.startsWith('/') && !/^\/[/\\]/.test(next) ? next : '/';
}

export function Login() {
  useDocumentTitle('Sign in');
  const [params] = useSearchParams();
  const signedIn = useSignedIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const setup = useQuery({ queryKey: ['auth', 'setup'], queryFn: async () => unwrap(await api.GET('/api/v1/auth/setup')) });
  const login = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/auth/login', { body: { email, password } })),
    onSuccess: () => signedIn(safeNext(params.get('next'))),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate();
  };
  return (
    <main className="auth-page">
      <div className="card">
        <h1>Sign in to AnswerDesk</h1>
        {setup.data?.required ? (
          <p className="notice">
            No account exists yet. Open the setup link the server printed when it started (<code>/dashboard/setup?token=…</code>) to create the first owner.
          </p>
        ) : null}
        <form className="stack" onSubmit={submit} noValidate>
          <div className="field">
            <label htmlFor="login-email">Email</label>
            <input id="login-email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} aria-invalid={login.isError || undefined} />
          </div>
          <div className="field">
            <label htmlFor="login-password">Password</label>
            <input id="login-password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} aria-invalid={login.isError || undefined} />
          </div>
          <FormError error={login.error} />
          <button type="submit" disabled={login.isPending}>
            Sign in
          </button>
        </form>
        <p className="muted">
          Got an invite? Open its link; it lets you choose your password. <Link to="/">Back</Link>
        </p>
      </div>
    </main>
  );
}
