import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnowledgeWorker, type KnowledgeWorker } from '../../knowledge/jobs.js';
import { createSource } from '../../knowledge/sources.js';
import { isPublicAddress } from '../../net/safe-fetch.js';
import { adminAuth, auth, createProject, createTestApp, dialects, type TestApp } from '../../../test/helper.js';
import { addSource, makePdf, multipart, search, serveSite, waitForSource } from '../../../test/support/knowledge.js';
import type { KnowledgeSource } from './schema.js';

const HTML_PAGE = `<!doctype html><html><head><title>Shipping policy</title></head><body>
<nav><a href="/">Home</a> <a href="/pricing">Pricing</a> Zephyrnavlink menu</nav>
<header>Acme header banner</header>
<main><article>
<h1 id="shipping">Shipping policy</h1>
<p>We ship every order within two business days from our warehouse in Rotterdam. Orders placed before noon leave the same day.</p>
<h2 id="international">International shipping</h2>
<p>International parcels travel with DHL Express and arrive within five to seven business days. Customs duties are paid by the recipient on delivery.</p>
<ul><li>Tracking numbers arrive by e-mail</li><li>Parcels are insured up to 500 euros</li></ul>
<p>Oversized items such as sofas are shipped by freight and need an appointment for delivery.</p>
</article></main>
<footer>Copyright Acme Zephyrfooter 2024</footer></body></html>`;

const MARKDOWN = `# Billing guide

Everything about invoices and payments.

## Refunds

Refunds are issued to the original payment method within 14 days of the return arriving at our warehouse.

## Invoices

| Plan | Invoice day |
| --- | --- |
| Monthly | 1st of the month |
| Yearly | Signup anniversary |

### Example

A yearly plan bought on 3 March is billed every 3 March.

## Payment methods

Cards and bank transfers are accepted.

### Example

A card payment is charged on the day of the order.
`;

describe.each(dialects)('knowledge sources end to end ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let site: Awaited<ReturnType<typeof serveSite>>;
  let projectId: string;
  let changing = 'The loyalty programme gives one point per euro spent.';
  let appPage = '<html><head><title>Opening hours</title></head><body><main><h1>Opening hours</h1><p>The kiosk opens at seven on weekdays.</p></main></body></html>';

  beforeAll(async () => {
    site = await serveSite({
      '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /private\n' },
      '/': {
        type: 'text/html',
        body: `<html><head><title>Acme help</title></head><body><main><h1>Acme help centre</h1>
          <p>Welcome to the Acme help centre, where every answer about your account lives in one place for customers.</p>
          <p><a href="/returns">Returns</a> <a href="/private/secret">Staff</a> <a href="/logo.png">logo</a>
          <a href="https://example.org/elsewhere">Elsewhere</a> <a href="/redirected">Old page</a></p></main></body></html>`,
      },
      '/returns': {
        type: 'text/html',
        body: `<html><head><title>Returns</title></head><body><main><h1>Returns</h1>
          <p>You can return unworn shoes within 30 days for a full refund, using the prepaid label in the box.</p>
          <p><a href="/returns/damaged">Damaged items</a></p></main></body></html>`,
      },
      '/returns/damaged': {
        type: 'text/html',
        body: `<html><head><title>Damaged items</title></head><body><main><h1>Damaged items</h1>
          <p>Photograph the damaged item and the parcel before you throw the packaging away, then contact support.</p></main></body></html>`,
      },
      '/private/secret': { type: 'text/html', body: '<html><body><p>Quixotic staff-only discount code</p></body></html>' },
      '/redirected': (_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      },
      '/app': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(appPage);
      },
      '/loyalty': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/markdown' });
        res.end(`# Loyalty\n\n${changing}\n`);
      },
      // Lists only another host's pages (www. where the sitemap is not): none of them is read.
      '/elsewhere-sitemap.xml': {
        type: 'application/xml',
        body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://www.other.example/returns</loc></url></urlset>`,
      },
      '/sitemap.xml': {
        type: 'application/xml',
        body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc>{{base}}/returns</loc></url><url><loc>{{base}}/loyalty</loc></url>
          <url><loc>{{base}}/private/secret</loc></url><url><loc>https://other.example/x</loc></url></urlset>`,
      },
    });
    t = await createTestApp({ dialect, env: { ANSWERDESK_ALLOW_PRIVATE_NETWORK: 'true' } });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    projectId = (await createProject(t)).project.id;
  });

  afterAll(async () => {
    await worker.stop();
    await t.close();
    await site.close();
  });

  const chunkRows = (sourceId: string) =>
    t.deps.store.db.selectFrom('knowledge_chunks').selectAll().where('source_id', '=', sourceId).orderBy('position').execute();

  it('plain text: paragraphs become chunks, searchable once ready', async () => {
    const source = await addSource(t.app, projectId, {
      type: 'text',
      title: 'Opening hours',
      content: 'Our shop opens at nine in the morning.\n\nOn Sundays the shop stays closed all day.',
    });
    expect(source).toMatchObject({ status: 'ready', type: 'text', title: 'Opening hours', error: null });
    expect(source.progress).toEqual({ pagesDone: 1, pagesTotal: 1, chunksDone: 1 });
    const rows = await chunkRows(source.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.text).toContain('Sundays the shop stays closed');
    const { results } = await search(t.app, projectId, 'Is the shop open on Sunday?');
    expect(results[0]).toMatchObject({ sourceId: source.id, title: 'Opening hours', source: { id: source.id, type: 'text' } });
  });

  it('markdown: headings give the heading path and anchors, tables stay whole', async () => {
    const source = await addSource(t.app, projectId, { type: 'markdown', content: MARKDOWN });
    expect(source.title).toBe('Billing guide');
    const rows = await chunkRows(source.id);
    const refunds = rows.find((r) => r.text.includes('Refunds are issued'))!;
    expect(JSON.parse(refunds.heading_path)).toEqual(['Billing guide', 'Refunds']);
    expect(refunds.url).toBe('#refunds');
    // Two sections of one name link apart, as GitHub numbers them.
    const examples = rows.filter((r) => JSON.parse(r.heading_path).at(-1) === 'Example');
    expect(examples.map((r) => [JSON.parse(r.heading_path), r.url])).toEqual([
      [['Billing guide', 'Invoices', 'Example'], '#example'],
      [['Billing guide', 'Payment methods', 'Example'], '#example-1'],
    ]);
    const table = rows.find((r) => r.text.includes('Monthly'))!;
    expect(table.text).toContain('| Yearly | Signup anniversary |');
    const { results } = await search(t.app, projectId, 'when do I get my refund');
    expect(results[0]!.chunkId).toBe(refunds.id);
  });

  it('markdown: reference links read as their text, code spans as written, comments and nested lists read', async () => {
    const doc = [
      '# DNS',
      '',
      '<!-- YAML',
      'added: v0.1.90',
      'changes:',
      '  - pr-url: https://github.com/nodejs/node/pull/1',
      '    description: Zephyrhistory up to 2<sup>31</sup> entries.',
      '-->',
      '',
      '[`dns.lookup()`][] uses the operating system facilities to resolve names, like `__dirname` and',
      '`Object.prototype.__proto__`; see [port.postMessage()][] and the [resolver][Resolver].',
      '',
      '* `options` {Object}',
      '  * `family` {integer} The record family.',
      '',
      '[`dns.lookup()`]: #dnslookuphostname-options-callback',
      '[port.postMessage()]: worker_threads.md#portpostmessagevalue-transferlist',
      '[Resolver]: #class-dnsresolver',
    ].join('\n');
    const body = multipart({ name: 'dns.md', type: 'text/markdown', data: doc });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
    expect(res.statusCode).toBe(201);
    const source = await waitForSource(t.app, projectId, (res.json() as { source: KnowledgeSource }).source.id);
    expect(source.status).toBe('ready');
    const rows = await chunkRows(source.id);
    expect(rows.map((r) => r.text)).toEqual([
      'dns.lookup() uses the operating system facilities to resolve names, like __dirname and Object.prototype.__proto__; see port.postMessage() and the resolver.\n\n' +
        '- options {Object}\n  - family {integer} The record family.',
    ]);
    const { results } = await search(t.app, projectId, 'operating system facilities resolve names');
    expect(results[0]!.text).toContain('dns.lookup() uses the operating system facilities');
    expect((await search(t.app, projectId, 'Zephyrhistory')).results).toEqual([]);
  });

  it('html: main content kept, navigation and footer dropped', async () => {
    const source = await addSource(t.app, projectId, { type: 'html', content: HTML_PAGE });
    expect(source.title).toBe('Shipping policy');
    const rows = await chunkRows(source.id);
    const all = rows.map((r) => r.text).join('\n');
    expect(all).toContain('DHL Express');
    expect(all).toContain('- Tracking numbers arrive by e-mail');
    expect(all).not.toContain('Zephyrnavlink');
    expect(all).not.toContain('Zephyrfooter');
    expect((await search(t.app, projectId, 'Zephyrnavlink')).results).toEqual([]);
    const { results } = await search(t.app, projectId, 'how long does international shipping take');
    expect(results[0]!.headingPath).toEqual(['Shipping policy', 'International shipping']);
    expect(results[0]!.url).toBeNull();
    expect(rows.find((r) => r.id === results[0]!.chunkId)!.url).toBe('#international');
  });

  it('faq pairs: one chunk per question', async () => {
    const source = await addSource(t.app, projectId, {
      type: 'faq',
      title: 'Account FAQ',
      items: [
        { question: 'How do I reset my password?', answer: 'Click "Forgot password" on the sign-in page and follow the e-mailed link.' },
        { question: 'Can I change my username?', answer: 'Usernames are permanent once chosen.' },
      ],
    });
    const rows = await chunkRows(source.id);
    expect(rows.map((r) => JSON.parse(r.heading_path))).toEqual([['How do I reset my password?'], ['Can I change my username?']]);
    const { results } = await search(t.app, projectId, 'reset password');
    expect(results[0]).toMatchObject({ sourceId: source.id, headingPath: ['How do I reset my password?'] });
  });

  it.each([
    ['guide.md', 'text/markdown', '# Warranty\n\nEvery kettle carries a three year warranty against defects.', 'markdown', 'kettle warranty'],
    ['notes.txt', 'text/plain', 'Gift cards never expire and can be used online.', 'text', 'gift card expire'],
    ['page.html', 'text/html', '<html><head><title>Stores</title></head><body><main><h1>Stores</h1><p>Our flagship store is on Kalverstraat in Amsterdam and opens daily at ten.</p></main></body></html>', 'html', 'flagship store'],
  ])('uploads %s as multipart', async (name, type, data, expectedType, query) => {
    const body = multipart({ name, type, data });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
    expect(res.statusCode).toBe(201);
    const created = (res.json() as { source: KnowledgeSource }).source;
    expect(created).toMatchObject({ type: expectedType, status: 'pending' });
    const ready = await waitForSource(t.app, projectId, created.id);
    expect(ready.status).toBe('ready');
    expect((await search(t.app, projectId, query)).results[0]!.sourceId).toBe(created.id);
  });

  it('reads uploads in the encoding they were saved in, and refuses binary data under a text name', async () => {
    const p = await createProject(t);
    const upload = (name: string, data: Buffer) => {
      const body = multipart({ name, type: 'application/octet-stream', data });
      return t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
    };
    const stored = async (res: Awaited<ReturnType<typeof upload>>) => {
      expect(res.statusCode).toBe(201);
      const source = await waitForSource(t.app, p.project.id, (res.json() as { source: KnowledgeSource }).source.id);
      expect(source.status).toBe('ready');
      return (await chunkRows(source.id)).map((r) => r.text).join(' ');
    };
    // Saved by an old Windows editor (windows-1252), as UTF-16 with its byte order mark, and an
    // HTML page that declares its charset: each read as written, not as UTF-8's replacement characters.
    expect(await stored(await upload('menu.txt', Buffer.from('Caf\xe9 cr\xe8me br\xfbl\xe9e costs \x805.', 'latin1')))).toContain('Café crème brûlée costs €5.');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Naïve résumé reviews take two days.', 'utf16le')]);
    expect(await stored(await upload('reviews.txt', utf16))).toContain('Naïve résumé reviews take two days.');
    const latin1Page = Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><title>Caf\xe9</title></head><body><main><h1>Caf\xe9</h1><p>Our caf\xe9 on the ground floor serves cr\xe8me br\xfbl\xe9e every afternoon.</p></main></body></html>', 'latin1');
    expect(await stored(await upload('cafe.html', latin1Page))).toContain('Our café on the ground floor serves crème brûlée');

    // Random bytes (an image or archive of no known signature) saved as .txt: refused, nothing stored.
    let seed = 7;
    const noise = Buffer.from(Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23));
    const before = await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute();
    const res = await upload('notes.txt', noise);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'The file holds binary data, not text: save it as PDF, HTML, Markdown or plain text first' });
    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute()).toEqual(before);
  });

  it('crawls pages in the charset they declare and skips what is not a document', async () => {
    const p = await createProject(t);
    const page = (title: string, text: string, head = '', links = '') =>
      Buffer.from(`<html><head>${head}<title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p><p>${links}</p></main></body></html>`, 'latin1');
    const send = (type: string, body: Buffer) => (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    let seed = 11;
    const noise = Buffer.from(Array.from({ length: 2048 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23));
    const cafe = await serveSite({
      '/': send('text/html; charset=iso-8859-1', page('Caf\xe9 help', 'The caf\xe9 takes cr\xe8me vouchers at the counter by the entrance.', '', '<a href="/tea">Tea</a> <a href="/download?file=menu">Menu</a> <a href="/notes">Notes</a>')),
      '/tea': send('text/html', page('Tea', 'Gr\xfcner Tee is served in the caf\xe9 until six.', '<meta charset="windows-1252">')),
      '/download': send('application/zip', Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), noise])),
      '/notes': send('text/plain', noise),
    });
    try {
      const source = await addSource(t.app, p.project.id, { type: 'url', url: `${cafe.base}/`, maxDepth: 1 });
      expect(source.status).toBe('ready');
      const texts = (await chunkRows(source.id)).map((r) => r.text).join(' ');
      expect(texts).toContain('The café takes crème vouchers');
      expect(texts).toContain('Grüner Tee is served in the café until six.');
      expect(texts).not.toContain('\ufffd');
      expect([...new Set((await chunkRows(source.id)).map((r) => r.url!.split('#')[0]))].sort()).toEqual([`${cafe.base}/`, `${cafe.base}/tea`]);
      expect(source.title).toBe('Café help');
      // Both were fetched and refused with a reason, not stored as text full of noise.
      expect(cafe.hits.get('/download')).toBe(1);
      expect(cafe.hits.get('/notes')).toBe(1);
      expect(source.error).toBe(
        `2 page(s) skipped; first: ${cafe.base}/download?file=menu: Could not read the page: Not a document AnswerDesk reads (application/zip): it reads HTML, Markdown, plain text and PDF`,
      );
      const notes = await addSource(t.app, p.project.id, { type: 'url', url: `${cafe.base}/notes` });
      expect(notes).toMatchObject({ status: 'failed', error: 'Could not read the page: Not a text document: the response holds binary data (text/plain)' });
      expect(await chunkRows(notes.id)).toEqual([]);
    } finally {
      await cafe.close();
    }
  });

  it('uploads a PDF: text extracted per page with a page anchor', async () => {
    const pdf = makePdf([
      ['Installation manual', 'Mount the bracket with the four supplied screws.'],
      ['Troubleshooting', 'If the display stays dark, hold the reset button for ten seconds.'],
    ]);
    const body = multipart({ name: 'manual.pdf', type: 'application/pdf', data: pdf }, { title: 'Heater manual' });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
    expect(res.statusCode).toBe(201);
    const source = await waitForSource(t.app, projectId, (res.json() as { source: KnowledgeSource }).source.id);
    expect(source).toMatchObject({ status: 'ready', type: 'pdf', title: 'Heater manual' });
    const { results } = await search(t.app, projectId, 'display stays dark reset');
    expect(results[0]).toMatchObject({ sourceId: source.id, url: null, headingPath: ['Page 2'] });
    const row = (await chunkRows(source.id)).find((r) => r.id === results[0]!.chunkId)!;
    expect(row.url).toBe('#page=2');
    expect(results[0]!.text).toContain('hold the reset button for ten seconds');
  });

  it('refuses unsupported uploads and invalid JSON sources', async () => {
    const p = await createProject(t);
    const upload = (name: string, data: Buffer | string) => {
      const body = multipart({ name, type: 'application/octet-stream', data });
      return t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
    };
    const res = await upload('tool.exe', 'MZ');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^Unsupported file type "\.exe": AnswerDesk reads \.md, \.markdown, \.txt, \.html, \.htm, \.pdf files/);
    // A Word document is a ZIP archive: refused by its name, and by its first bytes under a text name.
    const docx = Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x06\x00', 'latin1'), Buffer.from('[Content_Types].xml word/document.xml')]);
    const word = await upload('Returns policy.docx', docx);
    expect(word.statusCode).toBe(400);
    expect(word.json().error).toContain('Unsupported file type ".docx"');
    const renamed = await upload('returns.md', docx);
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json()).toEqual({ error: 'The file is a ZIP archive (as .docx, .xlsx, .pptx and .odt documents are), not markdown text: save it as PDF or HTML first' });
    // An empty file was uploaded, and is said to be empty (as the CLI says); a form sent without
    // choosing a file (a file part with no name and no bytes) uploaded none.
    const empty = await upload('faq.md', '');
    expect([empty.statusCode, empty.json()]).toEqual([400, { error: 'The file is empty' }]);
    const unchosen = await upload('', '');
    expect([unchosen.statusCode, unchosen.json()]).toEqual([400, { error: 'No file uploaded' }]);
    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
    const bad = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge`, headers: adminAuth(), payload: { type: 'url' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'Validation error', details: [{ path: 'url' }] });
    const scheme = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge`, headers: adminAuth(), payload: { type: 'url', url: 'file:///etc/passwd' } });
    expect(scheme.statusCode).toBe(400);
  });

  it('refuses blank content, and fields that are not for the source type or not fields at all, naming them; nothing stored', async () => {
    const p = await createProject(t);
    const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge`, headers: adminAuth(), payload });
    const cases: Array<[Record<string, unknown>, Array<{ path: string; message: string }>]> = [
      // Blank text would be stored, "ingested" and end ready with no chunk: nothing to search.
      [{ type: 'text', content: '   ' }, [{ path: 'content', message: 'must not be blank' }]],
      [{ type: 'markdown', content: '\n\t\n' }, [{ path: 'content', message: 'must not be blank' }]],
      [{ type: 'html', content: ' ' }, [{ path: 'content', message: 'must not be blank' }]],
      // A field another type takes was silently dropped.
      [{ type: 'faq', items: [{ question: 'Open on Sunday?', answer: 'No.' }], content: 'Stray text' }, [{ path: 'content', message: 'Not used by type "faq"' }]],
      [{ type: 'text', content: 'Hours', url: 'https://example.com/', maxPages: 3 }, [{ path: 'url', message: 'Not used by type "text"' }, { path: 'maxPages', message: 'Not used by type "text"' }]],
      [{ type: 'sitemap', url: 'https://example.com/sitemap.xml', maxDepth: 2 }, [{ path: 'maxDepth', message: 'Not used by type "sitemap"' }]],
      [{ type: 'url', url: 'https://example.com/', items: [{ question: 'Q?', answer: 'A.' }] }, [{ path: 'items', message: 'Not used by type "url"' }]],
      // A key that is no field at all, as on the rest of the admin API.
      [{ type: 'text', content: 'Hours', titel: 'Typo' }, [{ path: 'body', message: 'Unrecognized key: "titel"' }]],
      [{ type: 'faq', items: [{ question: 'Open on Sunday?', answer: 'No.', anwser: 'Typo' }] }, [{ path: 'items.0', message: 'Unrecognized key: "anwser"' }]],
    ];
    for (const [payload, details] of cases) {
      const res = await post(payload);
      expect([payload, res.statusCode, res.json()]).toEqual([payload, 400, { error: 'Validation error', details }]);
    }
    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
  });

  it('says what was too large about an upload: 413 "File too large", "Too many files", "Too many fields"; nothing stored', async () => {
    const p = await createProject(t);
    const upload = (payload: Buffer, headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge/files`, headers: { ...adminAuth(), ...headers }, payload });

    const big = multipart({ name: 'manual.md', type: 'text/markdown', data: Buffer.alloc(20 * 1024 * 1024 + 1, 'a') });
    const tooBig = await upload(big.payload, big.headers);
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json()).toEqual({ error: 'File too large' });
    expect(tooBig.headers['x-ratelimit-limit']).toBe('600');

    // Two files in one request: the second file part, after the boundary of the first.
    const one = multipart({ name: 'a.md', type: 'text/markdown', data: '# A\n\nFirst file.' });
    const boundary = one.headers['content-type'].split('boundary=')[1];
    const second = Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="b.md"\r\ncontent-type: text/markdown\r\n\r\n# B\r\n--${boundary}--\r\n`,
    );
    const twoFiles = await upload(Buffer.concat([one.payload.subarray(0, one.payload.length - `--${boundary}--\r\n`.length), second]), one.headers);
    expect(twoFiles.statusCode).toBe(413);
    expect(twoFiles.json()).toEqual({ error: 'Too many files' });

    const fields = multipart({ name: 'a.md', type: 'text/markdown', data: '# A' }, Object.fromEntries([...'abcdef'].map((k) => [k, k])));
    const tooManyFields = await upload(fields.payload, fields.headers);
    expect(tooManyFields.statusCode).toBe(413);
    expect(tooManyFields.json()).toEqual({ error: 'Too many fields' });

    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);
    // Within the limits the same upload works.
    expect((await upload(one.payload, one.headers)).statusCode).toBe(201);
  });

  it('answers 400 to a multipart body it cannot read, and keeps a title from a long file name to 300 characters', async () => {
    const p = await createProject(t);
    const upload = (payload: Buffer | string, contentType: string) =>
      t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${p.project.id}/knowledge/files`, headers: { ...adminAuth(), 'content-type': contentType }, payload });
    const noBoundary = await upload('abc', 'multipart/form-data');
    const cutOff = await upload('--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc', 'multipart/form-data; boundary=zzz');
    const badHeader = await upload('--zzz\r\nnot a header\r\n\r\nabc\r\n--zzz--\r\n', 'multipart/form-data; boundary=zzz');
    expect(noBoundary.statusCode).toBe(400);
    expect(noBoundary.json()).toEqual({ error: 'Malformed multipart/form-data body' });
    expect(cutOff.statusCode).toBe(400);
    expect(cutOff.json()).toEqual({ error: 'Malformed multipart/form-data body' });
    // A part without a header is skipped by the parser: no file was sent.
    expect(badHeader.statusCode).toBe(400);
    expect(badHeader.json()).toEqual({ error: 'No file uploaded' });
    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', p.project.id).execute()).toEqual([]);

    const long = multipart({ name: `${'a'.repeat(5000)}.txt`, type: 'text/plain', data: 'Some text.' });
    const res = await upload(long.payload, long.headers['content-type']);
    expect(res.statusCode).toBe(201);
    expect(res.json().source.title).toBe('a'.repeat(300));
  });

  it('crawls a start URL: same site, depth limit, robots.txt, private redirect refused', async () => {
    const source = await addSource(t.app, projectId, { type: 'url', url: `${site.base}/`, maxDepth: 1 });
    expect(source.status).toBe('ready');
    const rows = await chunkRows(source.id);
    const urls = [...new Set(rows.map((r) => r.url!.split('#')[0]))].sort();
    // depth 0 and 1 only: /returns/damaged is two links away; /private is disallowed; images and other sites skipped.
    expect(urls).toEqual([`${site.base}/`, `${site.base}/returns`]);
    expect(site.hits.get('/private/secret')).toBeUndefined();
    expect(site.hits.get('/logo.png')).toBeUndefined();
    expect(source.error).toMatch(/skipped/);
    expect(source.title).toBe('Acme help');
    const { results } = await search(t.app, projectId, 'return unworn shoes refund');
    expect(results[0]).toMatchObject({ sourceId: source.id, url: `${site.base}/returns#returns` });
  });

  it('reads a sitemap and re-syncs a URL source: new text replaces the old, atomically', async () => {
    const source = await addSource(t.app, projectId, { type: 'sitemap', url: `${site.base}/sitemap.xml` });
    expect(source.progress).toMatchObject({ pagesDone: 2, pagesTotal: 2 });
    expect((await search(t.app, projectId, 'loyalty point per euro')).results[0]!.sourceId).toBe(source.id);
    expect((await search(t.app, projectId, 'Quixotic')).results).toEqual([]);

    changing = 'The loyalty programme now gives two points per euro and a birthday voucher.';
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/${source.id}/sync`, headers: adminAuth() });
    expect(res.statusCode).toBe(202);
    const synced = await waitForSource(t.app, projectId, source.id);
    expect(synced.status).toBe('ready');
    expect(synced.syncedAt! > source.syncedAt!).toBe(true);
    const { results } = await search(t.app, projectId, 'loyalty birthday voucher');
    expect(results[0]!.text).toContain('birthday voucher');
    const rows = await chunkRows(source.id);
    expect(rows.some((r) => r.text.includes('one point per euro'))).toBe(false);
    expect(new Set(rows.map((r) => r.generation)).size).toBe(1);
  });

  it('fails a source that holds no text, saying why, instead of making it ready with nothing to search; a sync keeps what it had', async () => {
    const upload = async (name: string, type: string, data: Buffer | string) => {
      const body = multipart({ name, type, data });
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/files`, headers: { ...adminAuth(), ...body.headers }, payload: body.payload });
      expect(res.statusCode).toBe(201);
      return waitForSource(t.app, projectId, (res.json() as { source: KnowledgeSource }).source.id);
    };
    const failed = (error: string) => ({ status: 'failed', error, chunkCount: 0 });
    expect(await upload('blank.txt', 'text/plain', '  \n\n \t \n')).toMatchObject(failed('The document holds no text'));
    expect(await upload('blank.md', 'text/markdown', '\n\n<!-- to do -->\n')).toMatchObject(failed('The document holds no text'));
    expect(await upload('shell.html', 'text/html', '<html><body><div id="root"></div><script>render()</script></body></html>')).toMatchObject(failed('The document holds no text'));
    // A scanned manual: pages, but no text on them.
    expect(await upload('scan.pdf', 'application/pdf', makePdf([[], []]))).toMatchObject(
      failed('The PDF holds no text: a scanned document holds pictures of its pages; run it through text recognition (OCR) first'),
    );

    // A page that had text and is now built by JavaScript: the sync fails and the old text stays searchable.
    const page = await addSource(t.app, projectId, { type: 'url', url: `${site.base}/app`, maxDepth: 0 });
    expect(page).toMatchObject({ status: 'ready', chunkCount: 1 });
    appPage = '<html><head><title>Opening hours</title></head><body><div id="root"></div><script src="/bundle.js"></script></body></html>';
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/${page.id}/sync`, headers: adminAuth() })).statusCode).toBe(202);
    expect(await waitForSource(t.app, projectId, page.id)).toMatchObject({
      status: 'failed',
      error: 'The pages read hold no text: a page whose text is put in by JavaScript in the browser has none until then',
      chunkCount: 1,
    });
    expect((await search(t.app, projectId, 'kiosk opens weekdays')).results[0]!.sourceId).toBe(page.id);

    // A sitemap that lists no page of its own site: no page was read, so none was blank either.
    expect(await addSource(t.app, projectId, { type: 'sitemap', url: `${site.base}/elsewhere-sitemap.xml` })).toMatchObject(
      failed('The sitemap lists no page of its own site: only pages at its own scheme, host and port are read'),
    );
  });

  it('only URL sources can be synced', async () => {
    const source = await addSource(t.app, projectId, { type: 'text', content: 'Static text.' });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge/${source.id}/sync`, headers: adminAuth() });
    expect(res.statusCode).toBe(400);
  });

  it('delete removes the source and every chunk', async () => {
    const source = await addSource(t.app, projectId, { type: 'text', title: 'Temp', content: 'Xylophone lessons start in March.' });
    expect((await chunkRows(source.id)).length).toBeGreaterThan(0);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${projectId}/knowledge/${source.id}`, headers: adminAuth() });
    expect(res.statusCode).toBe(204);
    expect(await chunkRows(source.id)).toEqual([]);
    expect((await search(t.app, projectId, 'xylophone lessons')).results).toEqual([]);
    const gone = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/knowledge/${source.id}`, headers: adminAuth() });
    expect(gone.statusCode).toBe(404);
  });

  it('lists sources and keeps projects apart', async () => {
    const other = await createProject(t, undefined, 'Other');
    await addSource(t.app, other.project.id, { type: 'text', content: 'Otherproject walrus facts.' });
    const mine = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/knowledge`, headers: adminAuth() });
    const list = (mine.json() as { sources: KnowledgeSource[] }).sources;
    expect(list.length).toBeGreaterThan(5);
    expect(list.every((s) => s.projectId === projectId)).toBe(true);
    expect((await search(t.app, projectId, 'walrus')).results).toEqual([]);
    expect((await search(t.app, other.project.id, 'walrus')).results).toHaveLength(1);
    // The other project's secret key cannot read this project's knowledge.
    const foreign = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/knowledge/search?q=shipping`, headers: auth(other.secretKey) });
    expect(foreign.statusCode).toBe(404);
    const own = await search(t.app, other.project.id, 'walrus', auth(other.secretKey));
    expect(own.results).toHaveLength(1);
  });
});

describe.each(dialects)('SSRF guard during ingestion ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker | null = null;
  let site: Awaited<ReturnType<typeof serveSite>>;

  beforeAll(async () => {
    site = await serveSite({
      '/': { type: 'text/html', body: '<html><body><main><p>Start page about umbrellas and the weather outside today.</p><a href="/leak">more</a></main></body></html>' },
      '/leak': (_req, res) => {
        res.writeHead(301, { location: 'http://10.0.0.7/admin' });
        res.end();
      },
    });
    t = await createTestApp({ dialect });
  });

  afterAll(async () => {
    await worker?.stop();
    await t.close();
    await site.close();
  });

  it('refuses at creation a url or sitemap source the guard would refuse whatever DNS says, storing and fetching nothing', async () => {
    const { project } = await createProject(t);
    const port = new URL(site.base).port;
    const hosts = [site.base, `http://[::1]:${port}`, `http://localhost:${port}`, `http://Shop.LOCALHOST.:${port}`, 'http://0x7f.1', 'http://169.254.169.254', 'http://[::ffff:10.0.0.1]'];
    for (const base of hosts) {
      for (const body of [{ type: 'url', url: `${base}/` }, { type: 'sitemap', url: `${base}/sitemap.xml` }]) {
        const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${project.id}/knowledge`, headers: adminAuth(), payload: body });
        expect([body.url, res.statusCode, res.json()]).toEqual([
          body.url,
          400,
          { error: 'Validation error', details: [{ path: 'url', message: 'must not point at a private, loopback or link-local address' }] },
        ]);
      }
    }
    expect(await t.deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', project.id).execute()).toEqual([]);
    expect(site.hits.size).toBe(0);
  });

  it('refuses a loopback URL with the guard on when it is fetched, and a redirect to a private address from an allowed page', async () => {
    const { project } = await createProject(t);
    // Stored without the API's check (which refuses it at creation): the worker refuses it too.
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    const stored = await createSource(t.deps, project.id, { type: 'url', url: `${site.base}/`, options: { maxDepth: 0 } });
    const refused = await waitForSource(t.app, project.id, stored.id);
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/not allowed/);
    expect(site.hits.get('/')).toBeUndefined();
    await worker.stop();

    // With the guard on but the test server itself let through, the start page is read and the
    // redirect from /leak to 10.0.0.7 is refused on its hop.
    worker = startKnowledgeWorker(t.deps, { pollMs: 50, addressPolicy: (a) => a === '127.0.0.1' || isPublicAddress(a) });
    const allowed = await createSource(t.deps, project.id, { type: 'url', url: `${site.base}/`, options: { maxDepth: 1 } });
    const crawled = await waitForSource(t.app, project.id, allowed.id);
    expect(crawled.status).toBe('ready');
    expect(crawled.progress.pagesDone).toBe(1);
    expect(crawled.error).toMatch(/\/leak: Refused to connect to 10\.0\.0\.7/);
  });
});
