import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { Field, FormError, PageHeader } from '../components/ui';
import { useMe } from '../lib/auth';
import { projectsKey } from '../lib/project';

/** Owners create projects; the new project's keys and HMAC secret are shown once, here. */
export function NewProject() {
  const me = useMe();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects', { body: { name } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectsKey }),
  });
  const err = create.error instanceof ApiError ? create.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  if (me.user.role !== 'owner') return <PageHeader title="New project" description="Only the instance owner creates projects." />;
  if (create.data) {
    const { project, publicKey, secretKey, hmacSecret } = create.data;
    return (
      <>
        <PageHeader title={`Project “${project.name}” created`} />
        <div className="card stack">
          <p className="notice">Copy the secret key and the HMAC secret now: they are shown only once (only hashes are stored).</p>
          <p>
            Public key (for the widget): <code>{publicKey}</code>
          </p>
          <p>
            Secret key (for your servers only): <code>{secretKey}</code>
          </p>
          <p>
            HMAC secret (signs your users' identity): <code>{hmacSecret}</code>
          </p>
          <p>
            <Link className="button" to={`/p/${project.id}/knowledge`}>
              Add knowledge to it
            </Link>
          </p>
        </div>
      </>
    );
  }
  return (
    <>
      <PageHeader title="New project" description="A project is one assistant: its knowledge, actions, widget and conversations." />
      <form className="card stack" onSubmit={submit} noValidate>
        <Field label="Project name" error={err?.fieldError('name')}>
          {(p) => <input {...p} type="text" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <FormError error={create.error} />
        <div>
          <button type="submit" disabled={create.isPending}>
            Create project
          </button>
        </div>
      </form>
    </>
  );
}
