import { markdownToPage } from './src/knowledge/markdown.ts';
const K = 64_000;
const cases: Record<string, string> = {
  blockquote: '> '.repeat(K / 2) + 'x',
  blockquoteLines: Array.from({ length: 250 }, (_, i) => '> '.repeat(i) + 'x').join('\n'),
  list: Array.from({ length: 800 }, (_, i) => '  '.repeat(i) + '- x').join('\n'),
  listTabs: Array.from({ length: 350 }, (_, i) => '\t'.repeat(i) + '- x').join('\n'),
  brackets: '['.repeat(K) + 'x',
  stars: '*a'.repeat(K / 2),
  backticks: '`'.repeat(K),
  links: '[a]('.repeat(K / 4),
  emph: '_a '.repeat(K / 3),
  lt: '<'.repeat(K),
  ordered: Array.from({ length: 200 }, (_, i) => '   '.repeat(i) + '1. x').join('\n'),
  nestedEmph: '*'.repeat(5000) + 'a' + '*'.repeat(5000),
  nestedLinks: '[['.repeat(8000) + ']]'.repeat(8000),
};
for (const [name, md] of Object.entries(cases)) {
  const t = performance.now();
  try { markdownToPage(md, 't'); console.log(name, md.length, (performance.now() - t).toFixed(0), 'ms'); }
  catch (e) { console.log(name, 'THROWS', String(e).slice(0, 80), (performance.now() - t).toFixed(0), 'ms'); }
}
