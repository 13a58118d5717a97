import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layout of src/ as docs/conventions.md draws it, checked on the code itself: what each part may
 * import, that no import cycle exists, and that each table is queried by its owner only. Read with
 * TypeScript's own parser, so type-only and dynamic imports count as well.
 */

const SRC = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(SRC, '..');

/**
 * What each part of src/ may import besides itself (a folder, or a file at the top of src/). Keep
 * in step with the Layout section of docs/conventions.md. `widget` is the widget's build, outside src/.
 */
const CORE = ['projects', 'conversations', 'skills', 'knowledge', 'actions', 'agent', 'events', 'webhooks', 'accounts', 'evals'];
const MAY_IMPORT: Record<string, readonly string[]> = {
  lib: [],
  config: [],
  store: ['lib', 'config'],
  net: ['lib'],
  limits: ['lib'],
  projects: ['store', 'lib'],
  conversations: ['projects', 'webhooks', 'events', 'store', 'lib'],
  skills: ['store', 'lib'],
  knowledge: ['webhooks', 'store', 'net', 'lib', 'config'],
  actions: ['store', 'net', 'lib', 'config'],
  agent: ['knowledge', 'actions', 'conversations', 'skills', 'projects', 'store', 'lib', 'config'],
  // Homes for what comes next.
  events: ['lib', 'config'],
  webhooks: ['store', 'net', 'lib', 'config'],
  accounts: ['projects', 'store', 'lib'],
  evals: ['agent', 'knowledge', 'conversations', 'projects', 'store', 'lib', 'config'],
  // Composition.
  deps: ['agent', 'knowledge', 'events', 'webhooks', 'limits', 'store', 'lib', 'config'],
  http: ['deps', 'agent', 'projects', 'accounts', 'limits', 'store', 'lib', 'config'],
  api: ['http', 'deps', ...CORE, 'net', 'limits', 'store', 'lib', 'config', 'widget'],
  routes: ['api'],
  app: ['routes', 'http', 'deps', 'agent', 'lib', 'config'],
  server: ['app', 'deps', ...CORE, 'net', 'limits', 'store', 'lib', 'config'],
  cli: ['server', 'api', 'deps', ...CORE, 'net', 'limits', 'store', 'lib', 'config'],
};

/** The CLI is a front-end like the HTTP API: it shares the API's schemas and services, never its routes. */
const CLI_MAY_NOT = /^api\/[^/]+\/(admin-)?routes\.ts$/;

/** The one part that reads and writes each table. */
const TABLE_OWNERS: Record<string, string> = {
  projects: 'projects',
  api_keys: 'projects',
  conversations: 'conversations',
  messages: 'conversations',
  end_users: 'conversations',
  feedback: 'conversations',
  answer_leases: 'conversations',
  skills: 'skills',
  actions: 'actions',
  action_calls: 'actions',
  knowledge_sources: 'knowledge',
  knowledge_chunks: 'knowledge',
  knowledge_jobs: 'knowledge',
  knowledge_fts: 'knowledge',
  users: 'accounts',
  memberships: 'accounts',
  sessions: 'accounts',
  invites: 'accounts',
  setup_tokens: 'accounts',
  webhook_endpoints: 'webhooks',
  webhook_events: 'webhooks',
  webhook_deliveries: 'webhooks',
  knowledge_gaps: 'conversations',
  eval_suites: 'evals',
  eval_runs: 'evals',
};

/** Every source file of src/ (tests are users of the code, not part of its layout). */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(SRC, path)] : [];
  });
}

/** The part a file belongs to: its top folder under src/, or its own name for a file at the top. */
function partOf(file: string): string {
  if (file.startsWith('..')) return relative(ROOT, resolve(SRC, file)).split('/')[0]!;
  return file.includes('/') ? file.split('/')[0]! : file.replace(/\.ts$/, '');
}

const files = sourceFiles();
const parsed = new Map(files.map((f) => [f, ts.createSourceFile(f, readFileSync(join(SRC, f), 'utf8'), ts.ScriptTarget.Latest, true)]));

/** The relative imports of a file (static, type-only, re-exports and dynamic `import()`), resolved to src/-relative paths. */
function importsOf(file: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    let specifier: ts.Expression | undefined;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) specifier = node.moduleSpecifier;
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      found.push(relative(SRC, resolve(SRC, dirname(file), specifier.text.replace(/\.js$/, '.ts'))));
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed.get(file)!);
  return found;
}

const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('the layout of src/', () => {
  it('gives every part a rule here and a line in docs/conventions.md', () => {
    const layout = readFileSync(join(ROOT, 'docs/conventions.md'), 'utf8').split('\n## ')[1] ?? '';
    const parts = [...new Set(files.map(partOf))].sort();
    expect(parts.filter((p) => !(p in MAY_IMPORT))).toEqual([]);
    const named = (p: string) => layout.includes(`src/${p}/`) || layout.includes(`src/${p}.ts`);
    expect(Object.keys(MAY_IMPORT).filter((p) => !named(p))).toEqual([]);
  });

  it('has each part import only what its rule allows: the core never imports api/ or http/', () => {
    const broken: string[] = [];
    for (const [file, targets] of graph) {
      const from = partOf(file);
      for (const target of targets) {
        const to = partOf(target);
        if (to === from) continue;
        if (!MAY_IMPORT[from]?.includes(to) || (from === 'cli' && CLI_MAY_NOT.test(target))) broken.push(`${file} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('has no import cycle between files, type-only imports included', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const walk = (file: string) => {
      state.set(file, 'open');
      path.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
        else if (!state.has(next) && graph.has(next)) walk(next);
      }
      path.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) walk(file);
    expect(cycles).toEqual([]);
  });

  it('has each table queried only by the part that owns it', () => {
    const KYSELY = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'mergeInto']);
    const strays: string[] = [];
    const check = (file: string, table: string) => {
      const owner = TABLE_OWNERS[table];
      if (owner && owner !== partOf(file)) strays.push(`${file}: ${table} (owned by ${owner}/)`);
    };
    for (const [file, source] of parsed) {
      if (file.startsWith('store/migrations/')) continue;
      const visit = (node: ts.Node) => {
        // Query builder calls: db.selectFrom('conversations as c'), .leftJoin('end_users as u', …)
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && KYSELY.has(node.expression.name.text)) {
          const first = node.arguments[0];
          if (first && ts.isStringLiteralLike(first)) check(file, first.text.split(/\s/)[0]!);
        }
        // SQL text: sql`select … from api_keys k join projects p …`
        if (ts.isTaggedTemplateExpression(node) && node.tag.getText(source) === 'sql') {
          const template = node.template;
          const text = ts.isNoSubstitutionTemplateLiteral(template)
            ? template.text
            : [template.head.text, ...template.templateSpans.map((s) => s.literal.text)].join(' ? ');
          for (const m of text.matchAll(/\b(?:from|join|into|update)\s+([a-z_]+)/gi)) check(file, m[1]!.toLowerCase());
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(strays).toEqual([]);
  });
});
