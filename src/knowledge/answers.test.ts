import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAICompatible, type FakeOpenAICompatible } from '../../test/fakes/openai-compatible.js';
import { auth, createProject, createTestApp, dialects, sendMessage, type TestApp } from '../../test/helper.js';
import { addSource, search, serveSite } from '../../test/support/knowledge.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import { DONT_KNOW } from '../agent/builtin/knowledge.js';
import type { CreatedProject } from '../projects/projects.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';

const RETURNS = `# Returns

## Return window

You can return any unworn item within 30 days of delivery for a full refund. Use the prepaid label that came in the box.

## Refund timing

Refunds reach your original payment method within 5 business days after the parcel arrives at our
warehouse.

## Sending a parcel back

To send a parcel back:

1. Sign in and open Orders.
2. Choose the order and click Start a return.
3. Print the return label and tape it over the old address label.
4. Hand the parcel to any post office.

## Return postage

| Country | Return postage | Drop-off |
| --- | --- | --- |
| Netherlands | free | post office |
| Belgium | €5.95 | parcel shop |
`;

const PROMO = `# Promo codes

## Using a promo code on a placed order

We can't add a promo code to an order after it has been placed. To use the code anyway, cancel the
order and order again with the code.

## Conditions

Codes are not case-sensitive, so SPRING10 and spring10 work the same. The discount is shown before
you pay. You can use one promo code per order.
`;

const SHIPPING = `# Shipping

## Delivery times

Standard delivery inside the Netherlands takes two business days. Express delivery arrives the next morning before noon.
`;

/** A reference page: a definition list of settings, as manuals write them, then the page's stamp. */
const SETTINGS = `<!doctype html><html><head><title>Client settings</title></head><body>
<div role="navigation"><a href="/">Home</a> <a href="/next">Next page</a></div>
<main><h1>Client settings</h1>
<p>These settings change how each session of the server behaves. They can be set in the configuration file, or for one session with SET.</p>
<dl>
<dt id="temp-buffers"><code>temp_buffers</code> (<code>integer</code>)</dt>
<dd><p>Sets the maximum amount of memory used for temporary buffers within each session of the server.</p></dd>
<dt id="toast"><span><code>default_toast_compression</code> (<code>enum</code>)<br><code>toast_compression</code></span></dt>
<dd><p>This variable sets the default TOAST compression method for values of compressible columns. The default compression method is pglz.</p></dd>
<dt id="temp-tablespaces"><code>temp_tablespaces</code> (<code>string</code>)</dt>
<dd><p>This variable names the tablespaces in which temporary objects are created when a command names none.</p></dd>
</dl>
<p align="center"><small><i>This page last modified on <a href="/changes">2024-02-02 23:55:23</a> UTC</i></small></p>
</main></body></html>`;

/** A command's options, one with a note box inside its description, as DocBook renders them. */
const DUMP_OPTIONS = `<!doctype html><html><head><title>pg_dump</title></head><body>
<main><h1>pg_dump</h1>
<h2 id="description">Description</h2>
<p>pg_dump is a utility for backing up a database. It makes consistent backups even if the database is being used concurrently, and it does not block other users accessing the database, readers or writers.</p>
<p>Dumps can be output in script or archive file formats. Script dumps are plain-text files containing the commands required to reconstruct the database to the state it was in at the time it was saved.</p>
<h2 id="options">Options</h2>
<p>The following command-line options control the content and the format of the output of the dump.</p>
<dl>
<dt><code>-e <em>pattern</em></code></dt>
<dd><p>Dump only extensions matching the pattern. When this option is not specified, all non-system extensions in the target database are dumped.</p>
<div class="note"><h3 class="title">Note</h3><p>When the extension switch is given, pg_dump makes no attempt to dump any other database objects that the selected extensions depend on.</p></div></dd>
<dt><code>-f <em>file</em></code></dt>
<dd><p>Send the output of the dump to the specified file. When this parameter is omitted, the standard output is used.</p></dd>
</dl>
<h2 id="examples">Examples</h2>
<p>To dump a database called mydb into a SQL-script file, run pg_dump with the file option and the name of the database.</p>
</main></body></html>`;

/** A reference page whose entries are separated by rules, as SQLite's pragma.html writes them. */
const PRAGMAS = `<!doctype html><html><head><title>Pragma statements</title></head><body>
<main><h1>Pragma statements</h1>
<p>The PRAGMA statement is an SQL extension specific to SQLite and used to modify the operation of the library or to query the library for internal data. Each pragma below is described on its own.</p>
<a name="pragma_analysis_limit"></a><h _id=pragma_analysis_limit style="display:none"> PRAGMA analysis_limit</h><hr>
<p><b>PRAGMA analysis_limit;<br>PRAGMA analysis_limit = </b><i>N</i><b>;</b></p>
<p>Query or change a limit on the approximate ANALYZE setting. This is the approximate number of rows examined in each index by the ANALYZE command.</p>
<p>The current implementation only uses the lower 31 bits of the N value, and higher order bits are silently ignored.</p>
<a name="pragma_application_id"></a><h _id=pragma_application_id style="display:none"> PRAGMA application_id</h><hr>
<p><b>PRAGMA schema.application_id;<br>PRAGMA schema.application_id = </b><i>integer</i><b>;</b></p>
<p>The application_id PRAGMA is used to query or set the 32-bit signed big-endian Application ID integer located at offset 68 into the database header.</p>
</main></body></html>`;

/** A streamed answer cites the source its passage came from, through a real model provider and the builtin model. */
describe.each(dialects)('cited answers from knowledge ($name)', (dialect) => {
  let fake: FakeOpenAICompatible;
  let site: Awaited<ReturnType<typeof serveSite>>;
  let t: TestApp;
  let worker: KnowledgeWorker;
  let remote: CreatedProject;
  let builtin: CreatedProject;
  const sourceIds: Record<string, string> = {};

  beforeAll(async () => {
    fake = await startFakeOpenAICompatible();
    site = await serveSite({
      '/shipping': { type: 'text/markdown', body: SHIPPING },
    });
    t = await createTestApp({
      dialect,
      env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-fake', ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' },
    });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
  });
  // Each test its own projects, each with the two sources.
  beforeEach(async () => {
    remote = await createProject(t, { model: 'openai-compatible:fake' });
    builtin = await createProject(t, { model: 'builtin' });
    for (const p of [remote, builtin]) {
      sourceIds[`${p.project.id}:returns`] = (await addSource(t.app, p.project.id, { type: 'markdown', content: RETURNS })).id;
      sourceIds[`${p.project.id}:shipping`] = (await addSource(t.app, p.project.id, { type: 'url', url: `${site.base}/shipping` })).id;
    }
  });

  afterAll(async () => {
    await worker.stop();
    await t.close();
    await fake.close();
    await site.close();
  });

  async function ask(p: CreatedProject, question: string) {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey) });
    const conversationId = created.json().conversationId as string;
    const res = await sendMessage(t.app, p.publicKey, conversationId, question);
    expect(res.statusCode).toBe(200);
    const answer = await parseAnswer(res.body);
    const stored = await t.app.inject({ method: 'GET', url: `/api/v1/chat/conversations/${conversationId}`, headers: auth(p.publicKey) });
    const assistant = stored.json().messages.find((m: { role: string }) => m.role === 'assistant');
    return { ...answer, assistant };
  }

  it('a real model calls search_knowledge and the stream cites the source it found', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'how long until my refund arrives' } }] },
      { text: 'Refunds reach your payment method within 5 business days [1].' },
    );
    const { chunks, assistant } = await ask(remote, 'When will I get my refund?');
    const toolOutput = chunks.find((c) => c.type === 'tool-output-available') as { output: { results: Array<{ sourceId: string; text: string }> } };
    expect(toolOutput.output.results[0]!.sourceId).toBe(sourceIds[`${remote.project.id}:returns`]);
    expect(toolOutput.output.results[0]!.text).toContain('5 business days');
    // The model's second request carried the passages as the tool result.
    const second = fake.requests[fake.requests.length - 1]!.body.messages as Array<{ role: string; content: string }>;
    expect(second.find((m) => m.role === 'tool')!.content).toContain('5 business days');

    const sources = chunks.filter((c) => c.type === 'source-document' || c.type === 'source-url') as Array<{ type: string; sourceId: string; title?: string }>;
    expect(sources[0]).toMatchObject({ type: 'source-document', sourceId: sourceIds[`${remote.project.id}:returns`], title: 'Returns' });
    expect(assistant.sources[0]).toMatchObject({ sourceId: sourceIds[`${remote.project.id}:returns`], type: 'document', title: 'Returns' });
  });

  it('a URL source is cited as source-url with its page address', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'search_knowledge', arguments: { query: 'express delivery time' } }] },
      { text: 'Express delivery arrives the next morning [1].' },
    );
    const { chunks, assistant } = await ask(remote, 'How fast is express delivery?');
    const url = chunks.find((c) => c.type === 'source-url') as { sourceId: string; url: string };
    expect(url).toMatchObject({ sourceId: sourceIds[`${remote.project.id}:shipping`], url: `${site.base}/shipping#delivery-times` });
    expect(assistant.sources[0]).toMatchObject({ type: 'url', url: `${site.base}/shipping#delivery-times` });
  });

  it('the builtin model answers from the passage that holds the answer and cites it', async () => {
    const { chunks, assistant } = await ask(builtin, 'How many days do I have to return an item?');
    const text = streamedText(chunks);
    expect(text).toContain('within 30 days of delivery');
    expect(text).not.toContain('Express');
    // Sources are numbered in the order the search found them; the answer cites the first, [1].
    expect(text).toMatch(/\[1\]$/);
    expect(text).not.toContain('[2]');
    expect(assistant.sources[0].sourceId).toBe(sourceIds[`${builtin.project.id}:returns`]);
  });

  it('the builtin model quotes a procedure from its first step, a wrapped sentence whole, and a table row with its columns', async () => {
    // The best sentence is step 3; the answer starts at the line that introduces the steps.
    const steps = streamedText((await ask(builtin, 'How do I print the return label?')).chunks);
    expect(steps).toBe(
      'To send a parcel back:\n1. Sign in and open Orders.\n2. Choose the order and click Start a return.\n' +
        '3. Print the return label and tape it over the old address label.\n4. Hand the parcel to any post office. [1]',
    );
    // The source wraps this sentence over two lines; Markdown reads that as one sentence.
    const refund = streamedText((await ask(builtin, 'When does the refund reach my payment method?')).chunks);
    expect(refund).toContain('within 5 business days after the parcel arrives at our warehouse.');
    // A row is quoted alone, each value named by its column.
    const row = streamedText((await ask(builtin, 'What is the return postage from Belgium?')).chunks);
    expect(row).toBe('Country: Belgium; Return postage: €5.95; Drop-off: parcel shop. [1]');
  });

  it('the builtin model quotes the passage of a page whose sentence answers, not the first one found', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const promo = await addSource(t.app, p.project.id, { type: 'markdown', content: PROMO });
    // Both sections hold the question's words; the search ranks the one that repeats them first.
    const found = await search(t.app, p.project.id, 'Can I use two promo codes on one order?');
    expect(found.results[0]!.headingPath.at(-1)).toBe('Using a promo code on a placed order');
    const { chunks, assistant } = await ask(p, 'Can I use two promo codes on one order?');
    expect(streamedText(chunks)).toBe('You can use one promo code per order. [1]');
    expect(assistant.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([promo.id]);
  });

  it('the builtin model cites a URL source with its link', async () => {
    const { chunks } = await ask(builtin, 'How long does standard delivery take in the Netherlands?');
    expect(streamedText(chunks)).toContain('two business days');
    expect(chunks.find((c) => c.type === 'source-url')).toMatchObject({ sourceId: sourceIds[`${builtin.project.id}:shipping`] });
  });

  it('the builtin model says it does not know when nothing matches, and cites nothing', async () => {
    const { chunks, assistant } = await ask(builtin, 'Do you sell replacement bicycle chains?');
    // The project lets conversations go to a person (the default), so the decline offers one.
    expect(streamedText(chunks)).toBe(`${DONT_KNOW} I can also put you in touch with a person.`);
    expect(chunks.some((c) => c.type === 'source-url' || c.type === 'source-document')).toBe(false);
    expect(assistant.sources ?? []).toEqual([]);
  });

  it('the builtin model quotes a reference entry with its term, not into the next entry or the page stamp', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const settings = await addSource(t.app, p.project.id, { type: 'html', content: SETTINGS });
    const found = await search(t.app, p.project.id, 'default TOAST compression method');
    expect(found.results[0]!.text).toContain('default_toast_compression (enum) toast_compression\n\n: This variable sets');
    const toast = await ask(p, 'What is the default TOAST compression method?');
    expect(streamedText(toast.chunks)).toBe(
      'default_toast_compression (enum) toast_compression: This variable sets the default TOAST compression method for values of compressible columns. ' +
        'The default compression method is pglz. [1]',
    );
    expect(toast.assistant.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([settings.id]);
    // The last entry is followed by the page's stamp, which is no part of it.
    const temp = await ask(p, 'In which tablespaces are temporary objects created?');
    expect(streamedText(temp.chunks)).toBe(
      'temp_tablespaces (string): This variable names the tablespaces in which temporary objects are created when a command names none. [1]',
    );
  });
  it('files the content after a note box under the section it is in, and quotes the note with its title', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const dump = await addSource(t.app, p.project.id, { type: 'html', content: DUMP_OPTIONS });
    const found = await search(t.app, p.project.id, 'send the output of the dump to the specified file');
    expect(found.results[0]!.text).toContain('Send the output of the dump to the specified file.');
    expect(found.results[0]!.headingPath).toEqual(['pg_dump', 'Options']);
    const { chunks, assistant } = await ask(p, 'Does pg_dump dump the objects that the selected extensions depend on?');
    expect(streamedText(chunks)).toBe(
      'Note: When the extension switch is given, pg_dump makes no attempt to dump any other database objects that the selected extensions depend on. [1]',
    );
    expect(assistant.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([dump.id]);
  });
  it('quotes an entry of a reference page up to the rule that ends it, not into the next entry', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const pragmas = await addSource(t.app, p.project.id, { type: 'html', content: PRAGMAS });
    const found = await search(t.app, p.project.id, 'analysis limit higher order bits');
    expect(found.results[0]!.text).toContain('silently ignored.\n\n---\n\nPRAGMA schema.application_id;');
    const { chunks, assistant } = await ask(p, 'Which bits of the analysis limit N value are silently ignored?');
    expect(streamedText(chunks)).toBe('The current implementation only uses the lower 31 bits of the N value, and higher order bits are silently ignored. [1]');
    expect(assistant.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([pragmas.id]);
  });
  it('answers from the part of a manual page Readability would have dropped: pg_dump’s description', async () => {
    const p = await createProject(t, { model: 'builtin' });
    const html = readFileSync(new URL('../../test/quality/postgres/docs/app-pgdump.html', import.meta.url), 'utf8');
    const dump = await addSource(t.app, p.project.id, { type: 'html', content: html });
    const found = await search(t.app, p.project.id, 'does pg_dump block other users accessing the database');
    expect(found.results[0]!.headingPath).toEqual(['Description']);
    const { chunks, assistant } = await ask(p, 'Does pg_dump block other users accessing the database?');
    expect(streamedText(chunks)).toContain('pg_dump does not block other users accessing the database (readers or writers).');
    expect(assistant.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([dump.id]);
  });
});
