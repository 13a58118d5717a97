import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, testSecretBox } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import { createConversation } from '../conversations/conversations.js';
import { appendMessage } from '../conversations/messages.js';
import { createSuite } from '../evals/suites.js';
import { createProject } from '../projects/projects.js';
import type { Store } from '../store/index.js';

// Each command is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('answerdesk eval and gaps (CLI) on $name', { timeout: 240_000 }, (dialect) => {
  let db: CliDatabase;
  let dir: string;
  let store: Store;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await openCliDatabase(dialect);
    ({ dir, store, env } = db);
  });
  afterAll(async () => {
    await db.close();
  });

  it('fails the run when answers failed, whatever the thresholds say', async () => {
    // A model server that is not there: a port taken, then let go.
    const closed = createServer();
    await new Promise<void>((ready) => closed.listen(0, '127.0.0.1', ready));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const projectId = (await createProject(store.db, testSecretBox(), { name: 'Down', settings: { model: 'openai-compatible:gone' } })).project.id;
    const cases = join(dir, 'down.json');
    writeFileSync(cases, JSON.stringify([{ question: 'Do you sell gift wrapping?', answerable: false }]));
    const run = await runCli(['eval', 'run', '--project', projectId, '--file', cases, '--max-fabricated', '0'], {
      ...env,
      OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${port}/v1`,
    });
    expect(run.stdout).toMatch(/^1\s+FAIL\s+-\s+error\s+Do you sell gift wrapping\?\s+failed$/m);
    expect(run.stderr).toContain('1 of 1 answers failed, so the run measures nothing for them\n');
    // The failure is logged as the server logs it: what went wrong, not the prompt or the request.
    expect(run.stderr).toContain('"msg":"answer failed"');
    expect(run.stderr).not.toContain('Do you sell gift wrapping');
    expect(run.stderr).not.toContain('requestBodyValues');
    expect(run.code).toBe(1);
  });

  it('runs cases, prints a table and the metrics, and fails the run below the thresholds', async () => {
    const projectId = (await createProject(store.db, testSecretBox(), { name: 'Evals', settings: { model: 'builtin' } })).project.id;
    const file = join(dir, 'returns.md');
    writeFileSync(file, '# Returns\n\nParcels can be returned within 30 days using the prepaid label in the box.\n');
    expect((await runCli(['knowledge', 'add', '--project', projectId, file], env)).code).toBe(0);

    const cases = join(dir, 'cases.json');
    // An annotated case file: ids and tags are ignored.
    writeFileSync(
      cases,
      JSON.stringify([
        { id: 'r-1', question: 'How many days do I have to return a parcel?', expectedSources: ['Returns'], mustContain: ['30 days'], hard: false },
        { id: 'r-2', question: 'Do you sell gift wrapping?', answerable: false },
      ]),
    );
    const ok = await runCli(['eval', 'run', '--project', projectId, '--file', cases, '--min-hit3', '0.9', '--max-fabricated', '0'], env);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^#\s+RESULT\s+RANK\s+OUTCOME\s+QUESTION/m);
    expect(ok.stdout).toMatch(/^1\s+pass\s+1\s+answered\s+How many days do I have to return a parcel\?/m);
    expect(ok.stdout).toMatch(/^2\s+pass\s+-\s+declined\s+Do you sell gift wrapping\?/m);
    expect(ok.stdout).toContain('Model builtin: 2/2 passed (1 answerable, 1 unanswerable)');
    expect(ok.stdout).toMatch(/retrieval hit@3\s+1$/m);
    expect(ok.stdout).toMatch(/unanswerable answered anyway\s+0\/1$/m);

    // The expected source is not in the project: below --min-hit3, exit 1, each breach named.
    writeFileSync(cases, JSON.stringify({ cases: [{ question: 'How many days do I have to return a parcel?', expectedSources: ['Shipping'] }] }));
    const low = await runCli(['eval', 'run', '--project', projectId, '--file', cases, '--min-hit3', '0.9', '--min-declined', '0.5', '--json'], env);
    expect(low.code).toBe(1);
    expect(JSON.parse(low.stdout).metrics).toMatchObject({ hitAt3: 0, citesExpectedSource: 0, unanswerableDeclined: null });
    expect(low.stderr).toBe(
      'Threshold not met: hitAt3 0 is below --min-hit3 0.9\nThreshold not met: unanswerableDeclined has no value (no case measures it), --min-declined 0.5\n',
    );
    // Why a case failed is shortened in the table as its question is: one row per line, and readable.
    const terms = Array.from({ length: 10 }, (_, i) => `missing term number ${i}`);
    writeFileSync(cases, JSON.stringify([{ question: 'How many days do I have to return a parcel?', mustContain: terms }]));
    const long = await runCli(['eval', 'run', '--project', projectId, '--file', cases], env);
    const row = long.stdout.split('\n').find((l) => l.startsWith('1 '))!;
    expect(row).toMatch(/ missing "missing term number 0", .*…$/);
    expect(row.slice(row.indexOf('missing "')).length).toBe(80);
    const json = await runCli(['eval', 'run', '--project', projectId, '--file', cases, '--json'], env);
    expect(JSON.parse(json.stdout).results[0].missingTerms).toEqual(terms);

    // Usage errors: exit 2 with the reason.
    writeFileSync(cases, JSON.stringify([{ question: '' }]));
    const bad = await runCli(['eval', 'run', '--project', projectId, '--file', cases], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cases.0.question');
    const neither = await runCli(['eval', 'run', '--project', projectId, '--min-hit3', '2'], env);
    expect(neither.code).toBe(2);
    // What the API refuses is refused here too: U+0000, and cases over its 1 MiB body limit.
    writeFileSync(cases, JSON.stringify([{ question: 'Do you ship\u0000 to Mars?', answerable: false }]));
    const nul = await runCli(['eval', 'run', '--project', projectId, '--file', cases], env);
    expect([nul.code, nul.stderr.split('\n')[0]]).toEqual([2, `Error: Invalid cases in ${cases}: cases.0.question must not contain the NUL character (U+0000)`]);
    writeFileSync(cases, JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ question: `${i} ${'x'.repeat(1990)}`, mustContain: Array.from({ length: 10 }, () => 'y'.repeat(1000)) }))));
    const big = await runCli(['eval', 'run', '--project', projectId, '--file', cases], env);
    expect([big.code, big.stderr.split('\n')[0]]).toEqual([2, `Error: The cases in --file ${cases} are more than 1 MiB, the most one run takes`]);
    // A file saved with a byte order mark, as Windows editors save UTF-8, is read.
    writeFileSync(cases, `\uFEFF${JSON.stringify([{ question: 'Do you sell gift wrapping?', answerable: false }])}`);
    const bom = await runCli(['eval', 'run', '--project', projectId, '--file', cases], env);
    expect([bom.code, bom.stderr]).toEqual([0, '']);
  });

  it('runs a saved suite with --eval, stores each run and compares it with the one before', async () => {
    const projectId = (await createProject(store.db, testSecretBox(), { name: 'Suites', settings: { model: 'builtin' } })).project.id;
    const suite = await createSuite(store.db, projectId, { name: 'Basics', cases: [{ question: 'Do you sell gift wrapping?', answerable: false }] });
    const runs = () => store.db.selectFrom('eval_runs').select('id').where('eval_id', '=', suite.id).orderBy('created_at').execute();

    const first = await runCli(['eval', 'run', '--project', projectId, '--eval', suite.id, '--max-fabricated', '0'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^1\s+pass\s+-\s+declined\s+Do you sell gift wrapping\?/m);
    expect(first.stdout).not.toContain('Compared with');
    const [firstRun] = await runs();
    expect(firstRun).toBeDefined();

    const second = await runCli(['eval', 'run', '--project', projectId, '--eval', suite.id], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/unanswerable declined\s+1 {2}\(0\)$/m);
    expect(second.stdout).toMatch(new RegExp(`^Compared with run ${firstRun!.id} \\(\\S+\\): every question has the same result$`, 'm'));
    expect(await runs()).toHaveLength(2);

    // --json prints the API's answer to POST …/evals/{evalId}/run: the stored run and the comparison.
    const json = await runCli(['eval', 'run', '--project', projectId, '--eval', suite.id, '--json'], env);
    const body = JSON.parse(json.stdout) as { run: Record<string, unknown>; comparison: Record<string, unknown> };
    expect(Object.keys(body)).toEqual(['run', 'comparison']);
    expect(body.run).toMatchObject({ id: expect.stringMatching(/^evrun_/), evalId: suite.id, model: 'builtin', createdAt: expect.any(String) });
    expect(body.comparison).toMatchObject({ nowFailing: [], nowPassing: [] });

    const unknown = await runCli(['eval', 'run', '--project', projectId, '--eval', 'eval_unknown'], env);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'Error: Eval not found\n']);
  });

  it('lists knowledge gaps and resolves one into the FAQ', async () => {
    const projectId = (await createProject(store.db, testSecretBox(), { name: 'Gaps' })).project.id;
    const conversation = await createConversation(store.db, projectId);
    await appendMessage(store.db, conversation, { role: 'user', content: 'Do you ship to Mars?', status: 'complete' });
    await appendMessage(store.db, conversation, { role: 'assistant', content: "I don't know.", status: 'complete', outcome: 'declined' });

    const listed = await runCli(['gaps', 'list', '--project', projectId], env);
    expect(listed.code).toBe(0);
    const id = /^(gap_\w+)\s+1\s+1\s+0\s+\S+\s+Do you ship to Mars\?$/m.exec(listed.stdout)?.[1];
    expect(id, listed.stdout).toBeDefined();

    const resolved = await runCli(['gaps', 'resolve', '--project', projectId, id!, '--answer', 'No, we only ship within Europe.', '--json'], env);
    expect(resolved.code).toBe(0);
    const body = JSON.parse(resolved.stdout);
    expect(body.gap).toMatchObject({ id, status: 'resolved', answer: 'No, we only ship within Europe.' });
    expect(body.source).toMatchObject({ type: 'faq', title: 'Answers from the support team' });
    const again = await runCli(['gaps', 'list', '--project', projectId], env);
    expect(again.stdout).toBe('No open knowledge gaps in the last 30 day(s).\n');
  });
});
