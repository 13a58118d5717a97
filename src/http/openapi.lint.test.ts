import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { lint, loadConfig, type NormalizedProblem } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helper.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Where the served document is written for the linter; `.redocly.lint-ignore.yaml` names this file. */
const DOCUMENT = path.join(ROOT, 'test-artifacts', 'openapi.json');

const describeProblem = (p: NormalizedProblem) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;

/**
 * Redocly's linter (the engine of `redocly lint`, used through its programmatic API) on the
 * document the server serves, with the project's `redocly.yaml`: the `recommended` rules plus a few
 * stricter ones. Every error and warning fails, except the single problems waived with a reason in
 * `.redocly.lint-ignore.yaml`. It runs offline: the configuration extends only built-in rule sets
 * and the document has no external references.
 */
describe('OpenAPI lint', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('passes Redocly lint with no error or warning that is not waived', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    await mkdir(path.dirname(DOCUMENT), { recursive: true });
    await writeFile(DOCUMENT, res.body);

    const config = await loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
    const problems = await lint({ ref: DOCUMENT, config });
    expect(problems.filter((p) => !p.ignored).map(describeProblem)).toEqual([]);

    // Every waiver still waives something: a fixed problem takes its waiver with it.
    const waived = Object.values(config.ignore).flatMap((rules) =>
      Object.entries(rules).flatMap(([rule, pointers]) => [...pointers].map((pointer) => `${rule} ${pointer}`)),
    );
    expect(waived.length).toBeGreaterThan(0);
    const hit = new Set(problems.filter((p) => p.ignored).map((p) => `${p.ruleId} ${p.location[0]?.pointer}`));
    expect(waived.filter((w) => !hit.has(w))).toEqual([]);
  });

  it('fails on a problem the configuration does not waive', async () => {
    // The same document with one operation's description and operationId removed: the linter must see it.
    const broken = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body);
    delete broken.paths['/api/v1/chat/messages'].post.description;
    delete broken.paths['/api/v1/chat/messages'].post.operationId;
    const file = path.join(ROOT, 'test-artifacts', 'openapi-broken.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(broken));
    const config = await loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
    const rules = (await lint({ ref: file, config })).filter((p) => !p.ignored).map((p) => p.ruleId);
    expect(rules).toEqual(expect.arrayContaining(['operation-description', 'operation-operationId']));
  });
});
