import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminAuth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { search, waitForSource } from '../../test/support/knowledge.js';
import { newId } from '../lib/ids.js';
import { chunkPage } from './chunk.js';
import { markdownToPage } from './markdown.js';
import { ingestSource, insertChunks, type Progress } from './ingest.js';
import { enqueueIngestion, MAX_ATTEMPTS, startKnowledgeWorker } from './jobs.js';
import { isPublicAddress } from '../net/safe-fetch.js';
import { DocumentParser } from './parser.js';
import { createSource } from './sources.js';

/** The address policy that lets a test's site on 127.0.0.1 through the SSRF guard. */
const localSites = (a: string) => a === '127.0.0.1' || isPublicAddress(a);

/**
 * A one-page site on 127.0.0.1 whose page is held until `release()`: `requested` resolves when it
 * is first asked for; once released, every request for it is answered at once.
 */
async function heldPage(title: string, text: string) {
  let asked!: () => void;
  const requested = new Promise<void>((r) => (asked = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    asked();
    void released.then(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>${title}</title></head><body><main><p>${text}</p></main></body></html>`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/page`, requested, release, close: () => new Promise((r) => server.close(r)) };
}

describe.each(dialects)('ingestion jobs ($name)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.deps.store.db;
  /** A chunk of `generation` as a run of its job writes it, before the job's switch. */
  const writeChunk = (sourceId: string, projectId: string, generation: string, title: string, text: string) =>
    db()
      .insertInto('knowledge_chunks')
      .values({ id: newId('chunk'), project_id: projectId, source_id: sourceId, generation, position: 0, title, heading_path: '[]', headings: '', url: null, text, embedding: null })
      .execute();

  it('a job cut off by a crash is taken over once its lease expires; its half-written chunks are never searched', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', title: 'Pets', payload: 'Dogs are welcome in every store on a short leash.' });
    const job = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
    // A node claimed the job, wrote part of the chunks, then died: its lease ran out a minute ago.
    await db()
      .updateTable('knowledge_jobs')
      .set({ status: 'running', attempts: 1, lease_owner: 'worker_dead', lease_until: new Date(Date.now() - 60_000).toISOString() })
      .where('id', '=', job.id)
      .execute();
    await db().updateTable('knowledge_sources').set({ status: 'processing', pages_done: 0, chunks_done: 1 }).where('id', '=', source.id).execute();
    await writeChunk(source.id, project.id, job.generation, 'Pets', 'Half written leash text');
    expect((await search(t.app, project.id, 'leash')).results).toEqual([]);

    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      const ready = await waitForSource(t.app, project.id, source.id);
      expect(ready.status).toBe('ready');
      const rows = await db().selectFrom('knowledge_chunks').selectAll().where('source_id', '=', source.id).execute();
      expect(rows.map((r) => r.text)).toEqual(['Dogs are welcome in every store on a short leash.']);
      const after = await db().selectFrom('knowledge_jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
      expect(after).toMatchObject({ status: 'done', attempts: 2 });
      expect((await search(t.app, project.id, 'leash')).results.map((r) => r.text)).toEqual(['Dogs are welcome in every store on a short leash.']);
    } finally {
      await worker.stop();
    }
  });

  it('a job given back at shutdown after writing part of its chunks starts clean on its next run', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', title: 'Hours', payload: 'The store opens at nine on weekdays.' });
    const job = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
    // As a worker stopping at shutdown leaves it: queued again, its attempt not counted, touched since it was queued.
    await db()
      .updateTable('knowledge_jobs')
      .set({ status: 'queued', attempts: 0, lease_owner: null, lease_until: null, updated_at: new Date(Date.now() + 1000).toISOString() })
      .where('id', '=', job.id)
      .execute();
    await writeChunk(source.id, project.id, job.generation, 'Hours', 'The store opens at nine on weekdays.');

    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      expect((await waitForSource(t.app, project.id, source.id)).status).toBe('ready');
      const rows = await db().selectFrom('knowledge_chunks').select(['text', 'generation']).where('source_id', '=', source.id).execute();
      expect(rows).toEqual([{ text: 'The store opens at nine on weekdays.', generation: job.generation }]);
      expect((await search(t.app, project.id, 'weekdays')).results).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  it('a job given back at shutdown in the millisecond it was queued still starts clean on its next run', async () => {
    const { project } = await createProject(t);
    // The first run's page never comes: the worker is stopped while it waits.
    const site = await heldPage('Hours', 'The store opens at nine on weekdays.');
    // The clock stands still from the job's creation to its hand-back, as it can between nodes
    // whose clocks differ: the queued row's times alone cannot tell the two apart.
    vi.useFakeTimers({ toFake: ['Date'] });
    let job;
    try {
      const source = await createSource(t.deps, project.id, { type: 'url', url: site.url, options: { maxDepth: 0 } });
      job = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
      const first = startKnowledgeWorker(t.deps, { pollMs: 20, leaseMs: 60_000, addressPolicy: localSites });
      await site.requested;
      // The first run had written a chunk of its generation before it was stopped.
      await writeChunk(source.id, project.id, job.generation, 'Hours', 'Half written by the first run.');
      await first.stop();
      const given = await db().selectFrom('knowledge_jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
      expect(given).toMatchObject({ status: 'queued', attempts: 0, updated_at: job.created_at });
    } finally {
      vi.useRealTimers();
    }
    site.release();
    const second = startKnowledgeWorker(t.deps, { pollMs: 20, addressPolicy: localSites });
    try {
      expect((await waitForSource(t.app, project.id, job.source_id)).status).toBe('ready');
      const rows = await db().selectFrom('knowledge_chunks').select('text').where('source_id', '=', job.source_id).execute();
      expect(rows.map((r) => r.text)).toEqual(['The store opens at nine on weekdays.']);
    } finally {
      await second.stop();
      await site.close();
    }
  });

  it('a job that keeps dying is given up after the attempt limit, with a reason', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', payload: 'Anything.' });
    await db()
      .updateTable('knowledge_jobs')
      .set({ status: 'running', attempts: MAX_ATTEMPTS, lease_owner: 'worker_dead', lease_until: new Date(Date.now() - 1000).toISOString() })
      .where('source_id', '=', source.id)
      .execute();
    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      const failed = await waitForSource(t.app, project.id, source.id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/interrupted 3 times/);
    } finally {
      await worker.stop();
    }
  });

  it('a live lease is left alone: another node does not take the job', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', payload: 'Leased text.' });
    await db()
      .updateTable('knowledge_jobs')
      .set({ status: 'running', attempts: 1, lease_owner: 'worker_alive', lease_until: new Date(Date.now() + 60_000).toISOString() })
      .where('source_id', '=', source.id)
      .execute();
    const worker = startKnowledgeWorker(t.deps, { pollMs: 20 });
    try {
      // Give the worker several polls; the job must still belong to the live owner.
      for (let i = 0; i < 10; i++) {
        t.deps.knowledge.jobQueued.notify();
        await new Promise((r) => setTimeout(r, 20));
      }
      const job = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
      expect(job).toMatchObject({ lease_owner: 'worker_alive', attempts: 1, status: 'running' });
    } finally {
      await worker.stop();
    }
  });

  it('several workers on one database process each job exactly once', async () => {
    const { project } = await createProject(t);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await createSource(t.deps, project.id, { type: 'text', payload: `Document number ${i} about topic${i}.` })).id);
    }
    // Separate deps objects over the same store stand for separate nodes.
    const nodes = await Promise.all([1, 2, 3].map(() => createTestApp({ dialect, store: t.deps.store })));
    const workers = nodes.map((n) => startKnowledgeWorker(n.deps, { pollMs: 10 }));
    try {
      for (const id of ids) expect((await waitForSource(t.app, project.id, id)).status).toBe('ready');
      const jobs = await db().selectFrom('knowledge_jobs').selectAll().where('project_id', '=', project.id).execute();
      expect(jobs.map((j) => [j.status, j.attempts])).toEqual(ids.map(() => ['done', 1]));
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(nodes.map((n) => n.close()));
    }
  });

  it('a long document reports its chunks as they are written, not only when the page is done', async () => {
    const { project } = await createProject(t);
    const payload = Array.from({ length: 2300 }, (_, i) => `## Topic ${i}\n\nParagraph number ${i} about returns, parcels and refunds.\n`).join('\n');
    const total = chunkPage(markdownToPage(payload, 'Manual')).length;
    expect(total).toBeGreaterThan(2000);
    const created = await createSource(t.deps, project.id, { type: 'markdown', title: 'Manual', payload });
    const row = await db().selectFrom('knowledge_sources').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    const reports: Progress[] = [];
    const result = await ingestSource(row, 'gen_progress', {
      db: db(),
      embedder: null,
      // In place: the progress reports, not the thread, are what this test is about.
      parser: new DocumentParser({ offThreadMinSize: Infinity }),
      fetch: { allowPrivateNetwork: false, signal: new AbortController().signal },
      progress: async (p) => void reports.push(p),
    });
    expect(result).toMatchObject({ pages: 1, chunks: total });
    // The one page's chunks are counted while they are written, then the page is done.
    expect(reports).toEqual([
      { pagesDone: 0, pagesTotal: 1, chunksDone: 0 },
      { pagesDone: 0, pagesTotal: 1, chunksDone: 1000 },
      { pagesDone: 0, pagesTotal: 1, chunksDone: 2000 },
      { pagesDone: 1, pagesTotal: 1, chunksDone: total },
    ]);
    const written = await db().selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll().as('n')).where('source_id', '=', created.id).executeTakeFirstOrThrow();
    expect(Number(written.n)).toBe(total);
  });

  it('writes a batch larger than one statement could bind, with U+0000 taken out of its text', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', title: 'Bulk', payload: 'x' });
    // 7,000 rows × 11 columns: more than the 65,535 parameters one PostgreSQL statement may bind.
    const rows = Array.from({ length: 7000 }, (_, i) => ({
      id: newId('chunk'), project_id: project.id, source_id: source.id, generation: 'gen_bulk', position: i,
      title: 'Bulk\u0000 title', heading_path: JSON.stringify(['Part one']), headings: 'Part\u0000 one',
      url: i % 2 ? null : '#part\u0000-one', text: `Row\u0000 number ${i} with "quotes", a back\\slash, {braces} and NULL.`, embedding: null,
    }));
    await insertChunks(db(), rows);
    const stored = await db().selectFrom('knowledge_chunks').selectAll().where('source_id', '=', source.id).where('generation', '=', 'gen_bulk').orderBy('position').execute();
    expect(stored).toHaveLength(7000);
    expect(stored[6999]).toMatchObject({
      position: 6999, title: 'Bulk title', headings: 'Part one', heading_path: '["Part one"]', url: null,
      text: 'Row number 6999 with "quotes", a back\\slash, {braces} and NULL.',
    });
    expect(stored[0]).toMatchObject({ position: 0, url: '#part-one', embedding: null });
  });

  it('a ready source shows its final counts, a one-page one included', async () => {
    const { project } = await createProject(t);
    const payload = Array.from({ length: 30 }, (_, i) => `## Topic ${i}\n\nParagraph ${i} about parcels.\n`).join('\n');
    const source = await createSource(t.deps, project.id, { type: 'markdown', title: 'Parcels', payload });
    const worker = startKnowledgeWorker(t.deps, { pollMs: 20 });
    try {
      const ready = await waitForSource(t.app, project.id, source.id);
      const chunks = await db().selectFrom('knowledge_chunks').select('id').where('source_id', '=', source.id).execute();
      expect(ready).toMatchObject({ status: 'ready', chunkCount: chunks.length, progress: { pagesDone: 1, pagesTotal: 1, chunksDone: chunks.length } });
    } finally {
      await worker.stop();
    }
  });

  it('a re-sync of a source waits while another job of that source runs', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', payload: 'Gift cards never expire.' });
    const first = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
    // Another node runs the first job under a live lease; a sync queues a second one.
    await db().updateTable('knowledge_jobs').set({ status: 'running', attempts: 1, lease_owner: 'worker_other', lease_until: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', first.id).execute();
    await enqueueIngestion(db(), source.id, project.id);
    const finished: string[] = [];
    const worker = startKnowledgeWorker(t.deps, { pollMs: 10, onJobFinished: (outcome) => void finished.push(outcome) });
    try {
      // Polls go by (each claim attempt is a poll); the second job is not taken meanwhile.
      const other = await createSource(t.deps, project.id, { type: 'text', payload: 'Other document.' });
      await waitForSource(t.app, project.id, other.id);
      const waiting = await db().selectFrom('knowledge_jobs').select(['id', 'status']).where('source_id', '=', source.id).where('id', '!=', first.id).executeTakeFirstOrThrow();
      expect(waiting.status).toBe('queued');
      // The first job ends (its node gave it up): the second runs.
      await db().updateTable('knowledge_jobs').set({ status: 'done', lease_until: null }).where('id', '=', first.id).execute();
      worker.wake();
      expect((await waitForSource(t.app, project.id, source.id)).status).toBe('ready');
      const second = await db().selectFrom('knowledge_jobs').select('status').where('id', '=', waiting.id).executeTakeFirstOrThrow();
      expect(second.status).toBe('done');
    } finally {
      await worker.stop();
    }
  });

  it("a worker that finds at its switch that another node took its job over leaves that node's work alone", async () => {
    const { project } = await createProject(t);
    // The page is answered once the job has been taken over.
    const site = await heldPage('Care', 'Wash the cover at thirty degrees.');
    const source = await createSource(t.deps, project.id, { type: 'url', url: site.url, options: { maxDepth: 0 } });
    let finished!: (outcome: string) => void;
    const outcome = new Promise<string>((r) => (finished = r));
    // A lease long enough that no heartbeat runs before the switch.
    const worker = startKnowledgeWorker(t.deps, {
      pollMs: 20,
      leaseMs: 60_000,
      addressPolicy: localSites,
      onJobFinished: (o) => finished(o),
    });
    try {
      await site.requested;
      const job = await db().selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
      // This worker stalled past its lease; another node took the job over and has written a chunk.
      await db().updateTable('knowledge_jobs').set({ lease_owner: 'worker_other', attempts: 2, lease_until: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', job.id).execute();
      await writeChunk(source.id, project.id, job.generation, 'Care', 'Written by the other node.');
      site.release();
      expect(await outcome).toBe('lease_lost');
      const after = await db().selectFrom('knowledge_jobs').select(['status', 'lease_owner']).where('id', '=', job.id).executeTakeFirstOrThrow();
      expect(after).toEqual({ status: 'running', lease_owner: 'worker_other' });
      const shown = await db().selectFrom('knowledge_sources').select('status').where('id', '=', source.id).executeTakeFirstOrThrow();
      expect(shown.status).toBe('processing');
      const texts = await db().selectFrom('knowledge_chunks').select('text').where('source_id', '=', source.id).where('generation', '=', job.generation).execute();
      expect(texts.map((r) => r.text)).toContain('Written by the other node.');
    } finally {
      site.release();
      await worker.stop();
      await site.close();
    }
  });

  it(`runs ${dialect.name === 'postgres' ? 'several jobs at once on PostgreSQL' : 'one job at a time on SQLite'}`, async () => {
    const { project } = await createProject(t);
    // Each page is held until a second request is in flight (or 3 s went by): jobs run side by side
    // meet, jobs run one after the other do not.
    let inFlight = 0;
    let most = 0;
    const held: Array<() => void> = [];
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      inFlight++;
      most = Math.max(most, inFlight);
      const send = () => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>Page ${req.url}</title></head><body><main><p>Parcel page ${req.url} text.</p></main></body></html>`);
      };
      held.push(send);
      if (held.length >= 2) held.splice(0).forEach((f) => f());
      else setTimeout(() => held.splice(0).forEach((f) => f()), 3000);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const ids = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await createSource(t.deps, project.id, { type: 'url', url: `http://127.0.0.1:${port}/p${i}`, options: { maxDepth: 0 } })).id);
    }
    const worker = startKnowledgeWorker(t.deps, { pollMs: 20, addressPolicy: localSites });
    try {
      for (const id of ids) expect((await waitForSource(t.app, project.id, id)).status).toBe('ready');
      expect(most).toBe(dialect.name === 'postgres' ? 2 : 1);
    } finally {
      await worker.stop();
      await new Promise((r) => server.close(r));
    }
  });

  it('an HTML document nested deeper than any real page fails at once with the reason, the node still answering', async () => {
    const { project } = await createProject(t);
    const deep = `<html><head><title>Deep</title></head><body>${'<div>'.repeat(3_000)}<p>Bottom.</p>${'</div>'.repeat(3_000)}</body></html>`;
    const created = await t.app.inject({ method: 'POST', url: `/api/v1/admin/projects/${project.id}/knowledge`, headers: adminAuth(), payload: { type: 'html', content: deep } });
    expect(created.statusCode).toBe(201);
    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      const failed = await waitForSource(t.app, project.id, created.json().source.id);
      expect(failed).toMatchObject({ status: 'failed', error: "The page's HTML is nested more than 256 elements deep" });
      expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await worker.stop();
    }
  });

  it('a failed ingestion keeps the reason and leaves nothing searchable', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'pdf', title: 'Broken', payload: Buffer.from('%PDF-1.4 not really a pdf').toString('base64') });
    const worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    try {
      const failed = await waitForSource(t.app, project.id, source.id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toBeTruthy();
      const chunks = await db().selectFrom('knowledge_chunks').select('id').where('source_id', '=', source.id).execute();
      expect(chunks).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
