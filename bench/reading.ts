import { performance } from 'node:perf_hooks';
import { parseDocument, type DocumentInput } from '../src/knowledge/parse.js';
import { DocumentParser } from '../src/knowledge/parser.js';
import { makePdf } from '../test/support/knowledge.js';

/**
 * Reading benchmark: how long each reader holds the thread it runs on over documents made to be
 * slow, at 4 to just under 64 KB (the best of RUNS), and what a warm worker's round trip costs the
 * main thread against reading a small ordinary document in place. The figures behind which stored
 * documents DocumentParser reads in place (docs/knowledge.md, "Reading a document").
 */

const RUNS = 3;
const SIZES_KB = [4, 8, 16, 32, 64];

const fill = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const ordinaryMarkdown = (size: number) => fill('## Section\n\nSome *ordinary* text with a [link](https://help.example.com) and `code`.\n\n- one\n- two\n\n', size);

type Stored = Extract<DocumentInput, { kind: 'stored' }>['type'];
const CASES: Array<{ name: string; type: Stored; make(size: number): string }> = [
  { name: 'Markdown, _a repeated', type: 'markdown', make: (n) => fill('_a', n) },
  { name: 'Markdown, *a repeated', type: 'markdown', make: (n) => fill('*a', n) },
  { name: 'Markdown, [a repeated', type: 'markdown', make: (n) => fill('[a', n) },
  { name: 'Markdown, < repeated', type: 'markdown', make: (n) => fill('<', n) },
  { name: 'Markdown, lists nested 40 deep', type: 'markdown', make: (n) => fill(Array.from({ length: 40 }, (_, d) => `${'  '.repeat(d)}- a\n`).join(''), n) },
  { name: 'Markdown, quotes nested 40 deep', type: 'markdown', make: (n) => fill(Array.from({ length: 40 }, (_, d) => `${'>'.repeat(d + 1)} a\n`).join(''), n) },
  { name: 'Markdown, a long table', type: 'markdown', make: (n) => `| a | b | c | d |\n|---|---|---|---|\n${fill('| a | b | c | d |\n', n - 38)}` },
  { name: 'Markdown, ordinary', type: 'markdown', make: ordinaryMarkdown },
  { name: 'HTML, <p>a repeated', type: 'html', make: (n) => fill('<p>a', n) },
  { name: 'HTML, < repeated', type: 'html', make: (n) => fill('<', n) },
  { name: 'HTML, a page without <main>', type: 'html', make: (n) => `<body>${fill('<div><h2>Section</h2><p>Some <b>ordinary</b> text, with a <a href="/x">link</a>, long enough.</p></div>', n - 13)}</body>` },
  { name: 'text, ordinary', type: 'text', make: (n) => fill('Some plain text, a sentence.\n\n- a\n- b\n\n', n) },
  { name: 'text, a\\n\\n repeated', type: 'text', make: (n) => fill('a\n\n', n) },
  { name: 'text, one word', type: 'text', make: (n) => fill('x', n) },
  { name: 'FAQ, short items', type: 'faq', make: (n) => JSON.stringify(Array.from({ length: Math.ceil(n / 60) }, (_, i) => ({ question: `Question ${i}?`, answer: 'An answer *with* [text](x).' }))) },
];

async function bestOf(read: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await read().catch(() => undefined);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** Per document: wall-clock time and how long the main thread was busy (event-loop utilization). */
async function perDocument(read: () => Promise<unknown>, count: number) {
  for (let i = 0; i < 20; i++) await read();
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  for (let i = 0; i < count; i++) await read();
  const busy = performance.eventLoopUtilization(elu).active;
  return { wallMs: Number(((performance.now() - started) / count).toFixed(2)), mainThreadMs: Number((busy / count).toFixed(2)) };
}

export async function run(): Promise<void> {
  // The readers' modules loaded and warm before anything is timed.
  await parseDocument({ kind: 'stored', type: 'markdown', payload: ordinaryMarkdown(1024), title: '' });
  await parseDocument({ kind: 'stored', type: 'html', payload: '<main><h1>a</h1><p>b</p></main>', title: '' });
  const rows = [];
  for (const c of CASES) {
    const row: Record<string, string | number> = { document: c.name };
    for (const kb of SIZES_KB) {
      const ms = await bestOf(() => parseDocument({ kind: 'stored', type: c.type, payload: c.make(kb * 1024 - 1), title: '' }));
      row[`${kb} KB (ms)`] = Number(ms.toFixed(1));
    }
    rows.push(row);
  }
  console.log(`Reading a stored document on the main thread (one character under each size; best of ${RUNS}):`);
  console.table(rows);

  const small: DocumentInput = { kind: 'stored', type: 'markdown', payload: ordinaryMarkdown(2048), title: '' };
  const pdf: DocumentInput = { kind: 'stored', type: 'pdf', payload: makePdf([['We open at nine.', 'We close at five.'], ['Page two.']]).toString('base64'), title: 'Hours' };
  // Every document to the worker, whatever the parser would read in place.
  const parser = new DocumentParser({ offThreadMinSize: 0 });
  const coldStarted = performance.now();
  await parser.parse(small);
  const startMs = Math.round(performance.now() - coldStarted);
  const costs = [
    { document: '2 KB of ordinary Markdown', reading: 'main thread', ...(await perDocument(() => parseDocument(small), 300)) },
    { document: '2 KB of ordinary Markdown', reading: 'warm worker', ...(await perDocument(() => parser.parse(small), 300)) },
    { document: 'a 2-page PDF', reading: 'main thread', ...(await perDocument(() => parseDocument(pdf), 20)) },
    { document: 'a 2-page PDF', reading: 'warm worker', ...(await perDocument(() => parser.parse(pdf), 20)) },
  ];
  await parser.close();
  console.log(`A small document, read in place or by a warm worker (the worker's start and first document: ${startMs} ms):`);
  console.table(costs);
}
