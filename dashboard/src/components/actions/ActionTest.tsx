import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { parseJson, prettyJson } from '../kit/kit';
import { FormError } from '../ui';
import { callsKey } from './CallLog';

type Action = components['schemas']['Action'];

/** An arguments object to start from: each property of the schema with a value of its type. */
function exampleArguments(action: Action): string {
  const props = (action.parameters as { properties?: Record<string, { type?: string; enum?: unknown[]; default?: unknown }> }).properties ?? {};
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props)) {
    if (schema.default !== undefined) args[name] = schema.default;
    else if (schema.enum?.length) args[name] = schema.enum[0];
    else if (schema.type === 'integer' || schema.type === 'number') args[name] = 0;
    else if (schema.type === 'boolean') args[name] = false;
    else if (schema.type === 'array') args[name] = [];
    else if (schema.type === 'object') args[name] = {};
    else args[name] = '';
  }
  return JSON.stringify(args, null, 2);
}

/**
 * "Test": makes the real call with the arguments given (as the model would) and shows the request
 * as sent and the response as received, secrets masked by the server. The run is logged.
 */
export function ActionTest({ projectId, action, canConfigure }: { projectId: string; action: Action; canConfigure: boolean }) {
  const [args, setArgs] = useState(() => exampleArguments(action));
  const id = useId();
  const queryClient = useQueryClient();
  const parsed = parseJson<Record<string, unknown>>(args);
  const argsError = !parsed.ok
    ? parsed.error
    : typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)
      ? 'The arguments must be a JSON object.'
      : null;
  const run = useMutation({
    mutationFn: async (value: Record<string, unknown>) =>
      unwrap(
        await api.POST('/api/v1/admin/projects/{projectId}/actions/{actionId}/test', {
          params: { path: { projectId, actionId: action.id } },
          body: { arguments: value, userTokens: {} },
        }),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: callsKey(projectId, action.id) }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (parsed.ok && !argsError) run.mutate(parsed.value);
  };
  const result = run.data;
  return (
    <section className="card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Test “{action.name}”</h2>
      <form className="stack" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-args`}>Arguments (JSON)</label>
          <textarea
            id={`${id}-args`}
            className="mono"
            rows={6}
            spellCheck={false}
            value={args}
            onChange={(e) => setArgs(e.target.value)}
            aria-invalid={argsError ? true : undefined}
            aria-describedby={`${id}-check`}
          />
          <span id={`${id}-check`} aria-live="polite" className={argsError ? 'field-error' : 'hint'}>
            {argsError ?? 'Sent as the model would send them; the real endpoint is called.'}
          </span>
        </div>
        <FormError error={run.error} />
        <div>
          <button type="submit" disabled={!canConfigure || run.isPending || argsError !== null}>
            {run.isPending ? 'Testing…' : 'Test'}
          </button>
        </div>
      </form>
      {result ? (
        <div className="test-result" role="region" aria-label="Test result">
          <p role="status">
            {result.ok ? (
              <span className="badge ok">ok</span>
            ) : (
              <span className="badge bad">{result.response ? `HTTP ${result.response.status}` : 'failed'}</span>
            )}{' '}
            {result.response ? `HTTP ${result.response.status}` : null} in {result.latencyMs} ms
          </p>
          {result.error ? (
            <div className="form-error">
              {result.error.message}
              {result.error.details?.length ? (
                <ul>
                  {result.error.details.map((d, i) => (
                    <li key={i}>
                      {d.path ? <code>{d.path}</code> : null} {d.message}
                    </li>
                  ))}
                </ul>
              ) : null}
            </div>
          ) : null}
          <div className="grid-2">
            <div>
              <h3>Request</h3>
              {result.request ? (
                <pre aria-label="Request sent" tabIndex={0}>
                  {`${result.request.method} ${result.request.url}\n`}
                  {Object.entries(result.request.headers)
                    .map(([k, v]) => `${k}: ${v}`)
                    .join('\n')}
                  {result.request.body !== null ? `\n\n${prettyJson(result.request.body)}` : ''}
                </pre>
              ) : (
                <p className="muted">Nothing was sent.</p>
              )}
            </div>
            <div>
              <h3>Response</h3>
              {result.response ? (
                <pre aria-label="Response received" tabIndex={0}>
                  {`HTTP ${result.response.status}\n`}
                  {Object.entries(result.response.headers)
                    .map(([k, v]) => `${k}: ${v}`)
                    .join('\n')}
                  {`\n\n${prettyJson(result.response.body)}`}
                  {result.response.truncated ? '\n…(truncated after 1 MiB)' : ''}
                </pre>
              ) : (
                <p className="muted">No response.</p>
              )}
            </div>
          </div>
          {result.response ? (
            <details>
              <summary>What the model would be given</summary>
              <pre aria-label="What the model would be given" tabIndex={0}>
                {result.response.forModel}
              </pre>
            </details>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
