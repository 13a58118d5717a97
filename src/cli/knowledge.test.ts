import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dialects, testSecretBox } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import { fullTextIndexFor } from '../knowledge/search/index.js';
import { createProject } from '../projects/projects.js';
import type { Store } from '../store/index.js';

// Each command is a Node process compiling TypeScript on the fly: allow for a busy machine.
describe.each(dialects)('answerdesk knowledge (CLI) on $name', { timeout: 180_000 }, (dialect) => {
  let db: CliDatabase;
  let dir: string;
  let store: Store;
  let env: Record<string, string>;
  let projectId: string;

  beforeAll(async () => {
    db = await openCliDatabase(dialect);
    ({ dir, store, env } = db);
  });
  afterAll(async () => {
    await db.close();
  });
  // Each test its own project.
  beforeEach(async () => {
    projectId = (await createProject(store.db, testSecretBox(), { name: 'CLI knowledge' })).project.id;
  });

  const search = (q: string) => fullTextIndexFor(store).search(projectId, q, 5);

  it('adds a file and standard input, waits until they are searchable, lists, shows and deletes', async () => {
    const file = join(dir, 'returns.md');
    writeFileSync(file, '# Returns\n\nParcels can be returned within 30 days using the prepaid label in the box.\n');
    const added = await runCli(['knowledge', 'add', '--project', projectId, file, '--json'], env);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { source } = JSON.parse(added.stdout);
    // `add` waited for ingestion: the source is ready and its text is found at once.
    expect(source).toMatchObject({ type: 'markdown', status: 'ready', title: 'Returns' });
    expect((await search('prepaid label'))[0]).toMatchObject({ sourceId: source.id, headingPath: ['Returns'] });

    const piped = await runCli(['knowledge', 'add', '--project', projectId, '-', '--type', 'text', '--title', 'Opening hours', '--json'], env, 'The support desk is open from 9 to 17 on weekdays.');
    expect(piped.code).toBe(0);
    const fromStdin = JSON.parse(piped.stdout).source;
    expect(fromStdin).toMatchObject({ type: 'text', status: 'ready', title: 'Opening hours' });
    expect((await search('support desk weekdays'))[0]?.sourceId).toBe(fromStdin.id);

    const listed = await runCli(['knowledge', 'list', '--project', projectId], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${source.id}\\s+markdown\\s+ready\\s+1\\s+Returns$`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${fromStdin.id}\\s+text\\s+ready`, 'm'));

    const shown = await runCli(['knowledge', 'show', '--project', projectId, source.id, '--json'], env);
    expect(JSON.parse(shown.stdout).source).toMatchObject({ id: source.id, status: 'ready', chunkCount: 1 });

    const deleted = await runCli(['knowledge', 'delete', '--project', projectId, source.id], env);
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted source ${source.id} and its chunks.\n` });
    expect(await search('prepaid label')).toEqual([]);
    expect(await store.db.selectFrom('knowledge_chunks').select('id').where('source_id', '=', source.id).execute()).toEqual([]);
  });

  it('adds a folder and a glob file by file, skipping what it cannot read; a named unreadable file adds nothing', async () => {
    const docs = join(dir, 'help');
    mkdirSync(join(docs, 'shipping'), { recursive: true });
    mkdirSync(join(docs, '.drafts'), { recursive: true });
    writeFileSync(join(docs, 'warranty.md'), '# Warranty\n\nEvery kettle carries a three year warranty.\n');
    writeFileSync(join(docs, 'hours.txt'), 'The hotline answers from eight to six on weekdays.');
    writeFileSync(join(docs, 'shipping', 'abroad.html'), '<html><body><main><h1>Abroad</h1><p>Parcels abroad arrive within nine working days.</p></main></body></html>');
    writeFileSync(join(docs, '.drafts', 'secret.md'), '# Draft\n\nNot for customers.');
    // A Word document is a ZIP archive: under its own name and under a text name.
    const docx = Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x06\x00', 'latin1'), Buffer.from('word/document.xml')]);
    writeFileSync(join(docs, 'policy.docx'), docx);
    writeFileSync(join(docs, 'renamed.md'), docx);
    const sourcesBefore = await store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', projectId).execute();

    const named = await runCli(['knowledge', 'add', '--project', projectId, join(docs, 'warranty.md'), join(docs, 'policy.docx')], env);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('Error: Nothing was added:');
    expect(named.stderr).toMatch(/\n\nUsage:/);
    expect(named.stderr).toMatch(/policy\.docx: Unsupported file type "\.docx": AnswerDesk reads \.md, \.markdown, \.txt, \.html, \.htm, \.pdf files/);
    expect(await store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', projectId).execute()).toEqual(sourcesBefore);

    const folder = await runCli(['knowledge', 'add', '--project', projectId, docs], env);
    expect(folder.code).toBe(0);
    // One line per file as it is done (order of completion), then the total; the skipped ones on stderr.
    const lines = folder.stdout.trim().split('\n');
    expect(lines[0]).toBe('Added 3 sources; ingesting them now.');
    expect(lines.slice(1, 4).map((l) => l.replace(/ \(ks_\w+\)/, '')).sort()).toEqual(
      ['hours.txt', 'shipping/abroad.html', 'warranty.md'].map((f) => `ready   ${relative(process.cwd(), join(docs, f))}: 1 chunks`).sort(),
    );
    expect(lines[4]).toBe('3 of 3 sources ready, 3 chunks; 2 file(s) skipped.');
    expect(folder.stderr).toContain('Skipped 2 file(s) AnswerDesk cannot read:');
    expect(folder.stderr).toMatch(/policy\.docx: Unsupported file type "\.docx"/);
    expect(folder.stderr).toMatch(/renamed\.md: The file is a ZIP archive \(as \.docx, \.xlsx, \.pptx and \.odt documents are\), not markdown text/);
    expect((await search('kettle warranty'))[0]?.text).toContain('three year warranty');
    expect((await search('parcels abroad'))[0]?.text).toContain('nine working days');
    expect(await search('customers draft')).toEqual([]);

    const globbed = await runCli(['knowledge', 'add', '--project', projectId, `${docs}/**/*.{txt,html}`, '--json'], env);
    expect(globbed.code).toBe(0);
    const { sources, skipped } = JSON.parse(globbed.stdout);
    expect(skipped).toEqual([]);
    expect(sources.map((s: { title: string; status: string; chunkCount: number }) => [s.title, s.status, s.chunkCount]).sort()).toEqual([
      ['abroad', 'ready', 1],
      ['hours', 'ready', 1],
    ]);
    const none = await runCli(['knowledge', 'add', '--project', projectId, `${docs}/*.pdf`], env);
    expect(none).toMatchObject({ code: 1, stderr: `Error: No files match ${docs}/*.pdf\n` });
  });

  it('answers a usage error with exit code 2 and an unknown source with exit code 1', async () => {
    const usage = await runCli(['knowledge', 'add', '--project', projectId], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('answerdesk knowledge add --project <projectId>');
    // Numbers in decimal only: "0x10" is not 16, and an empty value is not 0.
    for (const value of ['0x10', '']) {
      const hex = await runCli(['knowledge', 'add', '--project', projectId, 'http://127.0.0.1:9/docs', '--max-pages', value], env);
      expect([hex.code, hex.stderr.split('\n')[0]]).toEqual([2, 'Error: --max-pages must be a whole number']);
    }
    // A page or sitemap the guard would refuse whatever DNS says is refused before anything is stored.
    const before = await store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', projectId).execute();
    const privateUrls = await runCli(['knowledge', 'add', '--project', projectId, 'https://docs.example.com/', 'http://localhost:9/docs', 'http://[::1]/sitemap.xml', '--no-wait'], env);
    expect([privateUrls.code, privateUrls.stderr.split('\n\nUsage:')[0]]).toEqual([
      2,
      'Error: Nothing was added:\n  http://localhost:9/docs: url: must not point at a private, loopback or link-local address\n  http://[::1]/sitemap.xml: url: must not point at a private, loopback or link-local address',
    ]);
    expect(await store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', projectId).execute()).toEqual(before);
    const unknown = await runCli(['knowledge', 'show', '--project', projectId, 'ks_missing'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not found/i);
  });
});
