import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { isUniqueViolation } from '../store/index.js';
import { knowledgeJobsOneRunning } from '../store/migrations/016-knowledge-jobs-one-running.js';
import { claimJob, enqueueIngestion } from './job-store.js';
import { createSource } from './sources.js';

/** At most one job of a knowledge source runs at a time, also when nodes claim at the same moment. */
describe.each(dialects)('one running job per source ($name)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.deps.store.db;
  const inOneMinute = () => new Date(Date.now() + 60_000).toISOString();
  const jobsOf = (sourceId: string, from = db()) =>
    from.selectFrom('knowledge_jobs').select(['id', 'status', 'lease_owner', 'attempts']).where('source_id', '=', sourceId).execute();

  it('a re-sync queued while a dead node held the source waits for the takeover of that job, then runs', async () => {
    // Its own database: the claims below must not meet other tests' queued jobs.
    const node = await createTestApp({ dialect });
    const ndb = node.deps.store.db;
    try {
      const { project } = await createProject(node);
      const source = await createSource(node.deps, project.id, { type: 'text', payload: 'Gift cards never expire.' });
      const first = await ndb.selectFrom('knowledge_jobs').selectAll().where('source_id', '=', source.id).executeTakeFirstOrThrow();
      await ndb
        .updateTable('knowledge_jobs')
        .set({ status: 'running', attempts: 1, lease_owner: 'worker_dead', lease_until: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', first.id)
        .execute();
      await enqueueIngestion(ndb, source.id, project.id);

      // The job whose lease ran out is taken over (the same row stays the one running job) ...
      const taken = await claimJob(ndb, 'worker_a', 30_000);
      expect(taken?.job).toMatchObject({ id: first.id, status: 'running', lease_owner: 'worker_a', attempts: 2 });
      // ... and the re-sync waits for it.
      expect(await claimJob(ndb, 'worker_b', 30_000)).toBeNull();
      // The database refuses a second running job of the source, whoever writes it.
      const second = await ndb.selectFrom('knowledge_jobs').select('id').where('source_id', '=', source.id).where('id', '!=', first.id).executeTakeFirstOrThrow();
      const refused = await ndb
        .updateTable('knowledge_jobs')
        .set({ status: 'running', lease_owner: 'worker_b', lease_until: inOneMinute() })
        .where('id', '=', second.id)
        .execute()
        .then(() => null, (err: unknown) => err);
      expect(isUniqueViolation(refused)).toBe(true);

      // The taken-over job ends: the re-sync runs next.
      await ndb.updateTable('knowledge_jobs').set({ status: 'done', lease_until: null }).where('id', '=', first.id).execute();
      const next = await claimJob(ndb, 'worker_b', 30_000);
      expect(next?.job).toMatchObject({ id: second.id, status: 'running', lease_owner: 'worker_b', attempts: 1 });
    } finally {
      await node.close();
    }
  });

  // PostgreSQL only: SQLite serialises writers, so its claims cannot overlap (no test to skip there).
  if (dialect.name === 'postgres') it('two nodes claiming at the same moment never run two jobs of one source', async () => {
    const node = await createTestApp({ dialect });
    const ndb = node.deps.store.db;
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    try {
      const { project } = await createProject(node);
      const source = await createSource(node.deps, project.id, { type: 'text', payload: 'Returns are free within 30 days.' });
      const first = await ndb.selectFrom('knowledge_jobs').select('id').where('source_id', '=', source.id).executeTakeFirstOrThrow();
      await enqueueIngestion(ndb, source.id, project.id);

      // Another node claims the first job in a transaction it has not committed yet.
      let holderPid!: (pid: number) => void;
      const pid = new Promise<number>((resolve) => (holderPid = resolve));
      const holder = ndb.transaction().execute(async (trx) => {
        await trx
          .updateTable('knowledge_jobs')
          .set({ status: 'running', attempts: 1, lease_owner: 'worker_other', lease_until: inOneMinute() })
          .where('id', '=', first.id)
          .execute();
        holderPid((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid);
        await committed;
      });
      const other = await pid;

      // This node claims meanwhile. Its snapshot shows the first job queued and locked, so it picks
      // the re-sync; the database must hold that claim until the other one commits.
      const claim = claimJob(ndb, 'worker_here', 30_000);
      let claimDone = false;
      void claim.finally(() => (claimDone = true)).catch(() => undefined);
      const blockedByOther = async () =>
        (await sql<{ n: number }>`select count(*) as n from pg_stat_activity where ${other} = any(pg_blocking_pids(pid))`.execute(ndb)).rows[0]!.n > 0;
      // Until one of the two happens: the claim waits on the other node's transaction, or it returned.
      while (!claimDone && !(await blockedByOther())) await new Promise((resolve) => setTimeout(resolve, 5));
      commit();
      await holder;

      const claimed = await claim;
      expect(claimed).toBeNull();
      const jobs = await jobsOf(source.id, ndb);
      expect(jobs).toHaveLength(2);
      expect(jobs.find((j) => j.id === first.id)).toEqual({ id: first.id, status: 'running', lease_owner: 'worker_other', attempts: 1 });
      expect(jobs.find((j) => j.id !== first.id)).toMatchObject({ status: 'queued', lease_owner: null, attempts: 0 });
      const shown = await ndb.selectFrom('knowledge_sources').select('status').where('id', '=', source.id).executeTakeFirstOrThrow();
      expect(shown.status).toBe('pending');
    } finally {
      commit();
      await node.close();
    }
  });

  it('claims made side by side over a queue of re-syncs start one job per source', async () => {
    const node = await createTestApp({ dialect });
    const ndb = node.deps.store.db;
    try {
      const { project } = await createProject(node);
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const source = await createSource(node.deps, project.id, { type: 'text', payload: `Document ${i}.` });
        // A re-sync queued right behind the first ingestion: the next job in the queue's order.
        await enqueueIngestion(ndb, source.id, project.id);
        ids.push(source.id);
      }
      // Three claimers at once, as one worker's slots on PostgreSQL, each until the queue has nothing it may run.
      const claimed = (
        await Promise.all(
          [1, 2, 3].map(async (k) => {
            const mine: string[] = [];
            for (let c = await claimJob(ndb, `worker_${k}`, 30_000); c; c = await claimJob(ndb, `worker_${k}`, 30_000)) mine.push(c.job.source_id);
            return mine;
          }),
        )
      ).flat();
      expect(claimed.sort()).toEqual([...ids].sort());
      const running = await ndb.selectFrom('knowledge_jobs').select('source_id').where('project_id', '=', project.id).where('status', '=', 'running').execute();
      expect(running.map((r) => r.source_id).sort()).toEqual([...ids].sort());
    } finally {
      await node.close();
    }
  });

  // PostgreSQL only, as above: SQLite's one writer at a time cannot deadlock.
  if (dialect.name === 'postgres') it('a source deleted while a worker claims its job is deleted, and the claim goes through', async () => {
    // The claim locks the job's row and then the source's; deleting the source must not take them
    // the other way round. Each round races one claim against one delete of the same source.
    const { project } = await createProject(t);
    const statuses = new Set<number>();
    const claimErrors: string[] = [];
    for (let i = 0; i < 200; i++) {
      const source = await createSource(t.deps, project.id, { type: 'text', payload: `Document ${i} about parcels.` });
      const [, res] = await Promise.all([
        claimJob(db(), 'worker_a', 60_000).catch((err: Error) => void claimErrors.push(err.message)),
        t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${project.id}/knowledge/${source.id}`, headers: adminAuth() }),
      ]);
      statuses.add(res.statusCode);
    }
    expect({ statuses: [...statuses], claimErrors }).toEqual({ statuses: [204], claimErrors: [] });
  });

  // PostgreSQL only, as above.
  if (dialect.name === 'postgres') it('a project deleted while a worker claims one of its jobs is deleted, and the claim goes through', async () => {
    // The same lock order for a project's delete, whose cascade runs project → sources → jobs.
    const statuses = new Set<number>();
    const claimErrors: string[] = [];
    for (let i = 0; i < 200; i++) {
      const { project } = await createProject(t);
      await createSource(t.deps, project.id, { type: 'text', payload: `Document ${i} about parcels.` });
      const [, res] = await Promise.all([
        claimJob(db(), 'worker_a', 60_000).catch((err: Error) => void claimErrors.push(err.message)),
        t.app.inject({ method: 'DELETE', url: `/api/v1/admin/projects/${project.id}`, headers: adminAuth() }),
      ]);
      statuses.add(res.statusCode);
    }
    expect({ statuses: [...statuses], claimErrors }).toEqual({ statuses: [204], claimErrors: [] });
  });

  it('the migration keeps one running job per source of a database that holds several, and then refuses more', async () => {
    const { project } = await createProject(t);
    const source = await createSource(t.deps, project.id, { type: 'text', payload: 'Three jobs ran at once.' });
    const alone = await createSource(t.deps, project.id, { type: 'text', payload: 'One job runs.' });
    await enqueueIngestion(db(), source.id, project.id);
    await enqueueIngestion(db(), source.id, project.id);
    const [a, b, c] = await jobsOf(source.id);
    const [single] = await jobsOf(alone.id);
    // As the race left it before the index: three running jobs of one source; b's node renewed last.
    await knowledgeJobsOneRunning.down!(db());
    const run = (id: string, owner: string, leaseUntil: string) =>
      db().updateTable('knowledge_jobs').set({ status: 'running', attempts: 1, lease_owner: owner, lease_until: leaseUntil }).where('id', '=', id).execute();
    await run(a!.id, 'worker_a', new Date(Date.now() + 10_000).toISOString());
    await run(b!.id, 'worker_b', inOneMinute());
    await run(c!.id, 'worker_c', new Date(Date.now() - 10_000).toISOString());
    await run(single!.id, 'worker_d', new Date(Date.now() - 10_000).toISOString());

    await db().transaction().execute((trx) => knowledgeJobsOneRunning.up(trx));

    const byId = new Map((await jobsOf(source.id)).map((j) => [j.id, j]));
    expect(byId.get(b!.id)).toMatchObject({ status: 'running', lease_owner: 'worker_b', attempts: 1 });
    // Given back as at shutdown: their nodes' next renewal finds the job no longer theirs.
    expect(byId.get(a!.id)).toMatchObject({ status: 'queued', lease_owner: null, attempts: 0 });
    expect(byId.get(c!.id)).toMatchObject({ status: 'queued', lease_owner: null, attempts: 0 });
    expect(await jobsOf(alone.id)).toEqual([{ id: single!.id, status: 'running', lease_owner: 'worker_d', attempts: 1 }]);
    const refused = await run(a!.id, 'worker_a', inOneMinute()).then(() => null, (err: unknown) => err);
    expect(isUniqueViolation(refused)).toBe(true);
  });
});
