import { createWebhookBody } from '../../api/webhooks/schema.js';
import { createWebhook, listWebhooks, sendWebhookTest } from '../../api/webhooks/service.js';
import { getProject } from '../../projects/projects.js';
import { deleteEndpoint } from '../../webhooks/endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';
import { option, parseCommand, parseInput, printJson, printTable, printText, required, sealingBox, withDeps, withStore } from './shared.js';
import { printUsage, subcommandGroup } from './types.js';

const usage = `Usage:
  answerdesk webhook add --project <projectId> --url <url> [--events <type,type…>] [--description <text>] [--json]
  answerdesk webhook list --project <projectId> [--json]
  answerdesk webhook test --project <projectId> <webhookId> [--json]
  answerdesk webhook delete --project <projectId> <webhookId>

add      Registers an endpoint that receives the project's events as signed POSTs (Standard
         Webhooks). --events is a comma-separated list of types; without it the endpoint takes
         every type, including types added later. Prints the signing secret (whsec_…) once: it
         is never shown again (list does not show it).
list     Lists the project's endpoints: id, enabled, events, URL. No secrets.
test     Sends a webhook.test event to the endpoint now and prints how the attempt went. Exit
         code 1 when it was not delivered (a failed test is retried on the schedule by the server).
delete   Deletes the endpoint and its deliveries log.

Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.

The URL goes through the same checks as the admin API: http(s) only, and no private, loopback or
link-local address unless ANSWERDESK_ALLOW_PRIVATE_NETWORK=true. --json prints the same JSON as
the admin API (POST/GET /projects/{id}/webhooks, POST …/webhooks/{webhookId}/test). Works directly
on the database named by DATABASE_URL, with the same secret key as the server (ANSWERDESK_SECRET_KEY,
or secret.key in the data directory), which seals the signing secret.
`;

async function add(args: string[]): Promise<number> {
  const cmd = parseCommand(
    args,
    { project: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' }, json: { type: 'boolean' } },
    usage,
  );
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const url = required(option(cmd, 'url'), 'url', usage);
  const events = option(cmd, 'events');
  const description = option(cmd, 'description');
  const body = parseInput(
    createWebhookBody,
    {
      url,
      ...(events !== undefined ? { events: events.split(',').map((e) => e.trim()).filter(Boolean) } : {}),
      ...(description !== undefined ? { description } : {}),
    },
    usage,
    'options',
  );
  const created = await withDeps(async (deps) => {
    await getProject(deps.store.db, projectId);
    await sealingBox(deps.store, deps.config);
    return createWebhook(deps, projectId, body);
  });
  if (cmd.values.json) printJson(created);
  else {
    const { webhook, secret } = created;
    process.stdout.write(
      `Created webhook ${webhook.id} for ${webhook.url} (events: ${webhook.events ? webhook.events.join(', ') : 'all'}).\n` +
        `Signing secret, shown only now: verify deliveries with it and keep it somewhere safe:\n${secret}\n`,
    );
  }
  return 0;
}

async function list(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const webhooks = await withDeps(async (deps) => {
    await getProject(deps.store.db, projectId);
    return listWebhooks(deps, projectId);
  });
  if (cmd.values.json) printJson({ webhooks });
  else if (webhooks.length === 0) process.stdout.write('No webhooks.\n');
  else
    printTable(
      ['ID', 'ENABLED', 'EVENTS', 'URL'],
      webhooks.map((w) => [w.id, w.enabled ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`, w.events ? w.events.join(',') : 'all', w.url]),
    );
  return 0;
}

async function test(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' }, json: { type: 'boolean' } }, usage, { min: 1, max: 1, names: '<webhookId>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const webhookId = cmd.positionals[0]!.trim();
  const delivery = await withDeps(async (deps) => {
    await getProject(deps.store.db, projectId);
    return sendWebhookTest(deps, projectId, webhookId);
  });
  const delivered = delivery.status === 'delivered';
  if (cmd.values.json) printJson({ delivery });
  else if (delivered) process.stdout.write(`Delivered ${delivery.eventType} to ${webhookId}: HTTP ${delivery.responseStatus} in ${delivery.durationMs} ms.\n`);
  else
    printText(
      `Not delivered: ${delivery.error ?? 'no answer'}.${delivery.nextAttemptAt ? ` The server retries it at ${delivery.nextAttemptAt}.` : ''}\n`,
    );
  return delivered ? 0 : 1;
}

async function remove(args: string[]): Promise<number> {
  const cmd = parseCommand(args, { project: { type: 'string' } }, usage, { min: 1, max: 1, names: '<webhookId>' });
  if (cmd.help) return printUsage(usage);
  const projectId = required(option(cmd, 'project'), 'project', usage);
  const webhookId = cmd.positionals[0]!.trim();
  await withStore(async (store) => {
    await getProject(store.db, projectId);
    await deleteEndpoint(store.db, projectId, webhookId);
  });
  process.stdout.write(`Deleted webhook ${webhookId}.\n`);
  return 0;
}

export const webhookCommands = subcommandGroup({
  name: 'webhook',
  usage,
  subcommands: { add, list, test, delete: remove },
});
