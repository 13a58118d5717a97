import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readUIMessageStream } from 'ai';
import pino from 'pino';
import { streamAnswer } from '../src/agent/answer.js';
import { projectQuestionTerms, questionTerms } from '../src/api/gaps/service.js';
import { groupQuestions } from '../src/conversations/question-groups.js';
import { createConversation } from '../src/conversations/conversations.js';
import { appendMessage, listMessages } from '../src/conversations/messages.js';
import { type AppDeps } from '../src/deps.js';
import { startKnowledgeWorker } from '../src/knowledge/jobs.js';
import { createSource } from '../src/knowledge/sources.js';
import { newId } from '../src/lib/ids.js';
import { secretBox } from '../src/lib/secret-box.js';
import { createProject } from '../src/projects/projects.js';
import { openBench, waitAllReady } from './store.js';
import { seededRandom } from './random.js';
import { withTypos } from './typos.js';

/**
 * Answer quality on the sets under test/quality (see its README): each set's documents go into a
 * project of their own, each question is searched (top 10) and answered by the builtin model through
 * the real answer loop (streamAnswer: tools, sources, stored outcome), on SQLite and, when
 * BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a PostgreSQL server, on PostgreSQL. Prints the
 * metrics of issue 13 per database, per set and split; `test` is the split to report, `dev` the one
 * to look at while changing things. BENCH_QUALITY_SETS=shop,postgres limits the sets;
 * BENCH_QUALITY_OUT=FILE writes each dev case's outcome (one JSON line each, to FILE.sqlite and
 * FILE.postgres) so that two runs can be compared case by case; like the verbose listing, never the
 * test cases. BENCH_QUALITY_TYPOS=N and BENCH_QUALITY_QUESTIONS=chat ask the questions as people
 * type them (see `asked`).
 */

const ROOT = fileURLToPath(new URL('../test/quality/', import.meta.url));
const SHOP_DOCS = fileURLToPath(new URL('../demo/shop/articles/', import.meta.url));

interface Case {
  id: string;
  question: string;
  answerable: boolean;
  expectedSources?: string[];
  mustContain?: string[];
  hard: boolean;
  split: 'dev' | 'test';
}

interface Outcome {
  c: Case;
  rank: number | null;
  cited: string[];
  text: string;
  outcome: string | null;
  /** The question's weighted terms and the best passages' coverage, for BENCH_QUALITY_VERBOSE. */
  why: string;
  /** How long the question's search took (top 10). */
  searchMs: number;
}

const SETS: Record<string, { docs: string; type: 'markdown' | 'html' }> = {
  shop: { docs: SHOP_DOCS, type: 'markdown' },
  postgres: { docs: join(ROOT, 'postgres/docs/'), type: 'html' },
  sqlite: { docs: join(ROOT, 'sqlite/docs/'), type: 'html' },
  node: { docs: join(ROOT, 'node/docs/'), type: 'markdown' },
  python: { docs: join(ROOT, 'python/docs/'), type: 'html' },
  git: { docs: join(ROOT, 'git/docs/'), type: 'html' },
};

const log = pino({ level: 'silent' });
const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');

/** How gaps and top questions group a split's questions: each beside its variants. */
interface Grouping {
  questions: number;
  /** Questions grouped with their chat-style rewrite (dev questions only). */
  chat: number;
  /** Questions grouped with themselves misspelt twice (bench/typos.ts). */
  typos: number;
  /** Pairs of different questions that landed in one group. */
  mixed: number;
  /** Milliseconds spent reading the terms: with misspellings read as the content's words, and without. */
  questionsMs: number;
  questionsPlainMs: number;
  /** The same for long messages of gibberish (the worst case of respelling). */
  gibberishMs: number;
  gibberishPlainMs: number;
}

/** Messages of 400 made-up words of 4 to 30 letters, the same every run. */
function gibberish(count: number): string[] {
  const next = seededRandom(12345);
  const word = () => Array.from({ length: 4 + Math.floor(next() * 27) }, () => 'bcdfghjklmnpqrstvwxz'[Math.floor(next() * 20)]).join('');
  return Array.from({ length: count }, () => Array.from({ length: 400 }, word).join(' '));
}

/** Milliseconds `termsOf` takes over `texts`. */
function timed(texts: string[], termsOf: (text: string) => string[]): number {
  const started = performance.now();
  for (const text of texts) termsOf(text);
  return performance.now() - started;
}

/**
 * Groups each split's questions together with their variants (the chat-style rewrite of a dev
 * question, and the question with two typos) as gaps and analytics' top questions do, in the
 * set's project, and counts how many questions meet their variants and how many different
 * questions meet each other.
 */
async function groupingOf(deps: AppDeps, projectId: string, cases: Case[]): Promise<Record<'dev' | 'test', Grouping>> {
  const termsOf = await projectQuestionTerms(deps, projectId);
  const chat = JSON.parse(readFileSync(join(ROOT, 'chat-style.json'), 'utf8')) as Record<string, string>;
  const figures = {} as Record<'dev' | 'test', Grouping>;
  for (const split of ['dev', 'test'] as const) {
    const items = cases
      .filter((c) => c.split === split)
      .flatMap((c) => [
        { id: c.id, kind: 'asked', text: c.question },
        ...(chat[c.id] ? [{ id: c.id, kind: 'chat', text: chat[c.id]! }] : []),
        { id: c.id, kind: 'typos', text: withTypos(c.question, 2, c.id) },
      ]);
    const groups = groupQuestions(items, (i) => i.text, termsOf);
    const groupOf = new Map(groups.flatMap((g, k) => g.members.map((m) => [m, k] as const)));
    const met = (kind: string) =>
      items.filter((i) => i.kind === 'asked' && groupOf.has(i) && items.some((v) => v.id === i.id && v.kind === kind && groupOf.get(v) === groupOf.get(i))).length;
    const mixed = groups.reduce((n, g) => n + g.members.reduce((m, a, i) => m + g.members.slice(i + 1).filter((b) => b.id !== a.id).length, 0), 0);
    const texts = items.map((i) => i.text);
    const noise = split === 'dev' ? gibberish(100) : [];
    figures[split] = {
      questions: items.filter((i) => i.kind === 'asked').length,
      chat: met('chat'),
      typos: met('typos'),
      mixed,
      // Timed with respellers of their own, as a report reads its messages: the one that grouped
      // them has read their words already.
      questionsMs: timed(texts, await projectQuestionTerms(deps, projectId)),
      questionsPlainMs: timed(texts, questionTerms),
      gibberishMs: timed(noise, await projectQuestionTerms(deps, projectId)),
      gibberishPlainMs: timed(noise, questionTerms),
    };
  }
  return figures;
}

/** One set on one database: ingest, then search and answer every case, and group the questions. */
async function runSet(deps: AppDeps, name: string): Promise<{ rows: Outcome[]; grouping: Record<'dev' | 'test', Grouping> }> {
  const { docs, type } = SETS[name]!;
  const { project } = await createProject(deps.store.db, secretBox(deps.config), { name: name === 'shop' ? 'Northwind Goods' : name, settings: { model: 'builtin' } });
  const fileBySource = new Map<string, string>();
  const worker = startKnowledgeWorker(deps, { pollMs: 20 });
  for (const file of readdirSync(docs).filter((f) => f.endsWith(type === 'html' ? '.html' : '.md')).sort()) {
    const source = await createSource(deps, project.id, { type, payload: readFileSync(join(docs, file), 'utf8') });
    fileBySource.set(source.id, file);
  }
  await waitAllReady(deps.store, project.id, 100);
  await worker.stop();
  const failed = await deps.store.db.selectFrom('knowledge_sources').select('id').where('project_id', '=', project.id).where('status', '=', 'failed').execute();
  if (failed.length) throw new Error(`${failed.length} sources of ${name} failed to ingest`);

  const written = JSON.parse(readFileSync(join(ROOT, name, 'questions.json'), 'utf8')) as Case[];
  const cases = asked(name, written);
  const out: Outcome[] = [];
  // The project's lexicon is learned at its first search: not one of the searches timed.
  await deps.knowledge.search.search(project.id, 'warm up', 10);
  for (const c of cases) {
    const started = performance.now();
    const hits = await deps.knowledge.search.search(project.id, c.question, 10);
    const searchMs = performance.now() - started;
    const i = hits.findIndex((h) => c.expectedSources?.includes(fileBySource.get(h.sourceId) ?? ''));
    const assessed = await deps.knowledge.search.assess(project.id, c.question, 3);
    const why =
      assessed.terms.map((t) => `${t.forms.join('|')}:${t.weight}`).join(' ') +
      ' :: ' +
      assessed.hits.map((h) => `${fileBySource.get(h.sourceId)}=${h.coverage}`).join(' ');
    const conv = await createConversation(deps.store.db, project.id);
    await appendMessage(deps.store.db, conv, { role: 'user', content: c.question, status: 'complete' });
    const stream = streamAnswer({
      deps,
      project,
      conversation: conv,
      endUser: null,
      verifiedUser: null,
      userTokens: {},
      assistantMessageId: newId('msg'),
      log,
    });
    for await (const _ of readUIMessageStream({ stream })) void _;
    const [, answer] = await listMessages(deps.store.db, conv.id);
    const sources = answer?.sources ? (JSON.parse(answer.sources) as Array<{ sourceId: string }>) : [];
    out.push({
      c,
      rank: i < 0 ? null : i + 1,
      cited: sources.map((s) => fileBySource.get(s.sourceId) ?? s.sourceId),
      text: answer?.content ?? '',
      outcome: answer?.outcome ?? null,
      why,
      searchMs,
    });
  }
  return { rows: out, grouping: await groupingOf(deps, project.id, written) };
}

/**
 * The questions as this run asks them: as written, or with BENCH_QUALITY_TYPOS=N misspelt words
 * in each (both splits), or with BENCH_QUALITY_QUESTIONS=chat the dev questions as people type them
 * in a chat (test/quality/chat-style.json).
 */
function asked(name: string, cases: Case[]): Case[] {
  const typos = Number(process.env.BENCH_QUALITY_TYPOS ?? 0);
  const chat = process.env.BENCH_QUALITY_QUESTIONS === 'chat' ? (JSON.parse(readFileSync(join(ROOT, 'chat-style.json'), 'utf8')) as Record<string, string>) : null;
  return cases.map((c) => {
    let question = c.question;
    if (chat && c.split === 'dev') {
      if (!chat[c.id]) throw new Error(`chat-style.json has no ${c.id} (set ${name})`);
      question = chat[c.id]!;
    }
    if (typos > 0) question = withTypos(question, typos, c.id);
    return { ...c, question };
  });
}

const ratio = (a: number, b: number) => (b > 0 ? Number((a / b).toFixed(2)) : null);

/** The metrics table of issue 13 over some outcomes. */
function metrics(rows: Outcome[]): Record<string, string | number | null> {
  const answerable = rows.filter((r) => r.c.answerable);
  const hard = answerable.filter((r) => r.c.hard);
  const unanswerable = rows.filter((r) => !r.c.answerable);
  const top3 = (list: Outcome[]) => list.filter((r) => r.rank !== null && r.rank <= 3).length;
  const declined = (r: Outcome) => r.outcome === 'declined' && r.cited.length === 0;
  const terms = answerable.map((r) => {
    const want = r.c.mustContain ?? [];
    const text = norm(r.text);
    return want.length ? want.filter((t) => text.includes(norm(t))).length / want.length : 1;
  });
  return {
    'retrieval hit@3': ratio(top3(answerable), answerable.length),
    'hit@3 on hard questions': ratio(top3(hard), hard.length),
    'MRR@10': ratio(answerable.reduce((s, r) => s + (r.rank ? 1 / r.rank : 0), 0), answerable.length),
    'answer cites an expected source': ratio(answerable.filter((r) => r.cited.some((f) => r.c.expectedSources?.includes(f))).length, answerable.length),
    'key terms present in the answer': ratio(terms.reduce((s, x) => s + x, 0), answerable.length),
    'unanswerable declined': ratio(unanswerable.filter(declined).length, unanswerable.length),
    'unanswerable answered anyway': `${unanswerable.filter((r) => !declined(r)).length}/${unanswerable.length}`,
    'answerable wrongly declined': `${answerable.filter((r) => r.outcome === 'declined').length}/${answerable.length}`,
  };
}

export async function run(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const targets: Array<['sqlite' | 'postgres', string]> = [['sqlite', ''], ...(pgUrl ? [['postgres', pgUrl] as ['postgres', string]] : [])];
  if (!pgUrl) console.log('PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to include it.');
  const names = (process.env.BENCH_QUALITY_SETS ?? Object.keys(SETS).join(',')).split(',').filter((n) => SETS[n]);
  const verbose = process.env.BENCH_QUALITY_VERBOSE === '1';
  const out = process.env.BENCH_QUALITY_OUT;

  for (const [kind, url] of targets) {
    const bench = await openBench(kind, url, { ANSWERDESK_EMBEDDING_MODEL: undefined });
    try {
      const all: Outcome[] = [];
      const columns: Record<string, Record<string, string | number | null>> = {};
      const zero = (): Grouping => ({ questions: 0, chat: 0, typos: 0, mixed: 0, questionsMs: 0, questionsPlainMs: 0, gibberishMs: 0, gibberishPlainMs: 0 });
      const grouped: Record<'dev' | 'test', Grouping> = { dev: zero(), test: zero() };
      for (const name of names) {
        const { rows, grouping } = await runSet(bench.deps, name);
        all.push(...rows);
        for (const split of ['dev', 'test'] as const) for (const k of Object.keys(grouping[split]) as Array<keyof Grouping>) grouped[split][k] += grouping[split][k];
        for (const split of ['dev', 'test'] as const) columns[`${name} ${split}`] = metrics(rows.filter((r) => r.c.split === split));
        if (verbose) {
          for (const r of rows.filter((x) => x.c.split === 'dev')) {
            const ok = r.c.answerable ? r.cited.some((f) => r.c.expectedSources?.includes(f)) : r.outcome === 'declined';
            console.log(`${ok ? ' ' : '✗'} ${r.c.id} [${r.outcome}] rank=${r.rank} cited=${r.cited.join(',')} :: ${r.c.question}\n    → ${r.text.slice(0, 240).replace(/\n/g, ' ')}\n    ? ${r.why}`);
          }
        }
      }
      if (out) {
        const line = (r: Outcome) => JSON.stringify({ id: r.c.id, split: r.c.split, answerable: r.c.answerable, hard: r.c.hard, rank: r.rank, outcome: r.outcome, cited: r.cited, expected: r.c.expectedSources ?? [], mustContain: r.c.mustContain ?? [], question: r.c.question, text: r.text, why: r.why });
        writeFileSync(`${out}.${kind}`, all.filter((r) => r.c.split === 'dev').map(line).join('\n') + '\n');
      }
      columns['all dev'] = metrics(all.filter((r) => r.c.split === 'dev'));
      columns['all test'] = metrics(all.filter((r) => r.c.split === 'test'));
      console.log(`Answer quality on ${kind} (builtin model; test/quality sets; report the test columns):`);
      const metricNames = Object.keys(columns['all test']!);
      console.table(Object.fromEntries(metricNames.map((m) => [m, Object.fromEntries(Object.entries(columns).map(([col, v]) => [col, v[m]]))])));
      const times = all.map((r) => r.searchMs).sort((a, b) => a - b);
      const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(2);
      console.log(`Search on ${kind} over the ${times.length} questions (top 10): p50 ${at(50)} ms, p99 ${at(99)} ms, max ${at(100)} ms`);
      console.log(`Question grouping on ${kind} (knowledge gaps, top questions; each question beside its variants):`);
      const share = (n: number, of: number) => `${n}/${of}`;
      console.table({
        'grouped with its chat-style rewrite': { dev: share(grouped.dev.chat, grouped.dev.questions), test: '-' },
        'grouped with itself misspelt twice': { dev: share(grouped.dev.typos, grouped.dev.questions), test: share(grouped.test.typos, grouped.test.questions) },
        'pairs of different questions grouped': { dev: grouped.dev.mixed, test: grouped.test.mixed },
      });
      const sets = names.length;
      const total = (k: keyof Grouping) => grouped.dev[k] + grouped.test[k];
      const [questions, ms, plain] = [total('questions'), total('questionsMs'), total('questionsPlainMs')];
      console.log(
        `Reading a message's terms for grouping on ${kind}, misspellings respelled against the plain reading: ` +
          `${questions} questions and their variants ${ms.toFixed(1)} ms (${(ms / plain).toFixed(1)}×); ` +
          `${sets * 100} messages of 400 made-up words ${(grouped.dev.gibberishMs / (sets * 100)).toFixed(2)} ms each (${(grouped.dev.gibberishMs / grouped.dev.gibberishPlainMs).toFixed(1)}×)`,
      );
      // A report's worth of messages, most of them different: each question with a few words of
      // another and a number.
      const asked = all.map((r) => r.c.question);
      const messages = Array.from({ length: 5000 }, (_, i) => `${asked[i % asked.length]} ${asked[(i * 7) % asked.length]!.split(' ').slice(0, 3).join(' ')} ${i}`);
      const reading = performance.now();
      const read = new Map(messages.map((m) => [m, questionTerms(m)]));
      const readMs = performance.now() - reading;
      const started = performance.now();
      const groupCount = groupQuestions(messages, (m) => m, (m) => read.get(m)!).length;
      const groupMs = performance.now() - started;
      console.log(`Grouping 5,000 messages into ${groupCount} groups: ${groupMs.toFixed(0)} ms, ${(groupMs / readMs).toFixed(1)}× reading their terms (${readMs.toFixed(0)} ms)`);
    } finally {
      await bench.close();
    }
  }
}
