import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource, helpManual, makePdf, multipart, search, waitForSource } from '../../test/support/knowledge.js';
import { parseAnswer, streamedText } from '../../test/ui-stream.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';
import { parseDocument, type DocumentInput } from './parse.js';
import { DocumentParser, OFF_THREAD_MIN_SIZE } from './parser.js';

describe('DocumentParser', () => {
  const parser = new DocumentParser();
  afterAll(() => parser.close());

  it('reads large documents in its worker thread into the same chunks as on the main thread', async () => {
    const lines = helpManual(2 * OFF_THREAD_MIN_SIZE).split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    const pdf = makePdf(Array.from({ length: Math.ceil(lines.length / 40) }, (_, i) => lines.slice(i * 40, i * 40 + 40)));
    const html = `<html><head><title>Help</title></head><body><main><h1>Help</h1>${lines.map((l, i) => `<p>${l} <a href="/topic/${i}">more</a></p>`).join('')}</main></body></html>`;
    const inputs: DocumentInput[] = [
      { kind: 'stored', type: 'markdown', payload: helpManual(4 * OFF_THREAD_MIN_SIZE), title: '' },
      { kind: 'stored', type: 'pdf', payload: pdf.toString('base64'), title: 'Manual' },
      { kind: 'fetched', body: Buffer.from(html), contentType: 'text/html; charset=utf-8', url: 'https://help.example.com/start', withLinks: true },
    ];
    for (const input of inputs) {
      expect(input.kind === 'stored' ? input.payload.length : input.body.byteLength).toBeGreaterThanOrEqual(OFF_THREAD_MIN_SIZE);
      const [offThread, onThread] = await Promise.all([parser.parse(input), parseDocument(input)]);
      expect(offThread.chunks.length, input.kind).toBeGreaterThan(10);
      expect(offThread).toEqual(onThread);
      if (input.kind === 'fetched') expect(offThread.links).toContain('https://help.example.com/topic/7');
    }
  });

  it('fails a document the worker cannot read with the reader’s reason, and goes on with the next', async () => {
    const notPdf: DocumentInput = { kind: 'stored', type: 'pdf', payload: Buffer.from(`%PDF-1.4\n${'x'.repeat(OFF_THREAD_MIN_SIZE)}`).toString('base64'), title: 'Broken' };
    await expect(parser.parse(notPdf)).rejects.toThrow(/\w/);
    const next = await parser.parse({ kind: 'stored', type: 'text', payload: `Vouchers never expire.\n\n${'Filler text. '.repeat(OFF_THREAD_MIN_SIZE / 10)}`, title: 'Vouchers' });
    expect(next.chunks[0]!.text).toContain('Vouchers never expire.');
  });

  it('reads small plain text and FAQs in place, and Markdown, HTML, PDF and fetched pages in its worker whatever their size', async () => {
    // Read on this thread: done before an abort can stop it.
    const inPlace: Array<Extract<DocumentInput, { kind: 'stored' }>> = [
      { kind: 'stored', type: 'text', payload: 'We open at nine.', title: 'Hours' },
      { kind: 'stored', type: 'faq', payload: JSON.stringify([{ question: 'When do you open?', answer: 'We open at nine.' }]), title: 'FAQ' },
    ];
    for (const input of inPlace) {
      const controller = new AbortController();
      const read = parser.parse(input, controller.signal);
      controller.abort(new Error('stop'));
      expect((await read).chunks[0]!.text, input.type).toContain('We open at nine.');
    }
    // Read in the worker: the abort reaches them there. The run of emphasis just under
    // OFF_THREAD_MIN_SIZE is made to be slow: marked takes about the square of its length, over a
    // second on this thread.
    const offThread: DocumentInput[] = [
      { kind: 'fetched', body: Buffer.from('# Hours\n\nWe open at nine.'), contentType: 'text/markdown', url: 'https://help.example.com/hours.md', withLinks: false },
      { kind: 'stored', type: 'markdown', payload: '# Hours\n\nWe open at nine.', title: '' },
      { kind: 'stored', type: 'markdown', payload: '*a'.repeat(OFF_THREAD_MIN_SIZE / 2 - 1), title: 'Emphasis' },
      { kind: 'stored', type: 'html', payload: '<h1>Hours</h1><p>We open at nine.</p>', title: '' },
      { kind: 'stored', type: 'pdf', payload: makePdf([['We open at nine.']]).toString('base64'), title: 'Hours' },
    ];
    const controller = new AbortController();
    const reads = offThread.map((input) => parser.parse(input, controller.signal).then(() => 'read', (err: Error) => err.message));
    controller.abort(new Error('stop'));
    expect(await Promise.all(reads)).toEqual(offThread.map(() => 'stop'));
    const read = await parser.parse({ kind: 'fetched', body: Buffer.from('# Hours\n\nWe open at nine.'), contentType: 'text/markdown', url: 'https://help.example.com/hours.md', withLinks: false });
    expect(read.chunks[0]!.text).toBe('We open at nine.');
  });

  it('gives up on a document when asked to, stopping the worker’s work on it', async () => {
    const controller = new AbortController();
    const pending = parser.parse({ kind: 'stored', type: 'markdown', payload: helpManual(40 * OFF_THREAD_MIN_SIZE), title: '' }, controller.signal);
    controller.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    const after = await parser.parse({ kind: 'stored', type: 'markdown', payload: helpManual(2 * OFF_THREAD_MIN_SIZE), title: '' });
    expect(after.chunks.length).toBeGreaterThan(10);
  });
});

/**
 * The modules a fresh process loads to read a Markdown document and then an HTML page, as the
 * parser's worker does (it loads parse.ts). An import of linkedom, Readability or unpdf is refused
 * by a loader hook (the process fails); what is required shows in the CommonJS module cache.
 */
async function readersLoaded(): Promise<{ afterMarkdown: string[]; afterHtml: string[] }> {
  const refuse = `export async function resolve(specifier, context, next) {
    if (/^(linkedom|@mozilla\\/readability|unpdf)$/.test(specifier)) throw new Error('imported ' + specifier);
    return next(specifier, context);
  }`;
  const script = `
    import { createRequire, register } from 'node:module';
    import { register as registerTsx } from 'tsx/esm/api';
    registerTsx();
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(refuse)}));
    const { parseDocument } = await import(${JSON.stringify(new URL('./parse.ts', import.meta.url).href)});
    const loaded = () => Object.keys(createRequire(process.cwd() + '/').cache).map((p) => p.match(/node_modules\\/((@[^/]+\\/)?[^/]+)/)?.[1]).filter((name, i, all) => name && all.indexOf(name) === i);
    await parseDocument({ kind: 'stored', type: 'markdown', payload: '# Hours\\n\\nWe open at <b>nine</b>.\\n\\n<div>Closed on Sundays.</div>\\n', title: '' });
    const afterMarkdown = loaded();
    await parseDocument({ kind: 'stored', type: 'html', payload: '<html><body><h1>Hours</h1><p>We open at nine.</p></body></html>', title: '' });
    console.log(JSON.stringify({ afterMarkdown, afterHtml: loaded() }));
  `;
  const cwd = fileURLToPath(new URL('../..', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd });
  return JSON.parse(stdout) as { afterMarkdown: string[]; afterHtml: string[] };
}

describe("the parser's worker", () => {
  it('loads the HTML readers only when it meets an HTML page, so that a Markdown-only worker starts fast', async () => {
    const { afterMarkdown, afterHtml } = await readersLoaded();
    expect(afterMarkdown).not.toContain('linkedom');
    expect(afterMarkdown).not.toContain('@mozilla/readability');
    expect(afterHtml).toEqual(expect.arrayContaining(['linkedom', '@mozilla/readability']));
  });
});

/**
 * A large upload is parsed off the main thread: while its parse is under way (the stretch a parse
 * on this thread blocks from start to end), health checks go through, and an answer is given
 * before the first chunk is written. Counting the health checks that complete while the parser
 * holds the document, not timing them nor counting the whole stretch up to the first chunk, keeps
 * this from depending on the machine's speed or load: a parse on this thread lets none complete,
 * one in the worker lets through as many as fit in its time.
 */
describe.each(dialects)('ingesting a large document on $name', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 20 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('keeps answering health checks and questions while a 3 MB Markdown upload is read', async () => {
    const p = await createProject(t, { model: 'builtin' });
    await addSource(t.app, p.project.id, { type: 'text', title: 'Hours', content: 'The shop is open from nine to five on weekdays.' });
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(p.publicKey), payload: {} });
    const conversationId = created.json().conversationId as string;

    // The parser is the app's own; this only notes when it holds a document.
    const parser = t.deps.knowledge.parser;
    const parse = parser.parse.bind(parser);
    let parsing = false;
    let parses = 0;
    parser.parse = async (...args) => {
      parsing = true;
      parses++;
      try {
        return await parse(...args);
      } finally {
        parsing = false;
      }
    };
    onTestFinished(() => void (parser.parse = parse));

    const upload = multipart({ name: 'manual.md', type: 'text/markdown', data: helpManual(3 * 1024 * 1024) });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge/files`, headers: adminAuth(upload.headers), payload: upload.payload });
    expect(res.statusCode, res.body).toBe(201);
    const sourceId = res.json().source.id as string;

    const chunksWritten = async () =>
      Number(
        (
          await t.deps.store.db
            .selectFrom('knowledge_chunks')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('source_id', '=', sourceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const status = async () => (await t.deps.store.db.selectFrom('knowledge_sources').select('status').where('id', '=', sourceId).executeTakeFirstOrThrow()).status;

    // Over a real socket, as a load balancer and a browser would: a request is served only when
    // the event loop gets to it. Ask a question at once; meanwhile check health until the
    // document's first chunk is written.
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    let answerText: string | null = null;
    const answer = fetch(`${base}/api/v1/chat/messages`, {
      method: 'POST',
      headers: { ...auth(p.publicKey), 'content-type': 'application/json' },
      body: JSON.stringify({ conversationId, messages: [{ role: 'user', content: 'When is the shop open?' }] }),
    }).then(async (r) => void (answerText = streamedText((await parseAnswer(await r.text())).chunks)));
    let healthyWhileParsing = 0;
    let answeredBeforeFirstChunk = false;
    for (let i = 0; i < 100_000 && (await chunksWritten()) === 0 && (await status()) !== 'failed'; i++) {
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      await health.arrayBuffer();
      if (parsing) healthyWhileParsing++;
      if (answerText !== null) answeredBeforeFirstChunk = true;
    }
    await answer;
    expect(parses).toBe(1);
    expect(healthyWhileParsing).toBeGreaterThanOrEqual(5);
    expect(answeredBeforeFirstChunk).toBe(true);
    expect(answerText).toContain('nine to five');

    const source = await waitForSource(t.app, p.project.id, sourceId, 120_000);
    expect(source).toMatchObject({ status: 'ready', error: null, title: 'Store manual' });
    expect(source.progress.chunksDone).toBeGreaterThan(1000);
    const found = await search(t.app, p.project.id, 'code Q1234X');
    expect(found.results[0]!.text).toContain('Code Q1234X is listed here.');
  });
});
