import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProject, createTestApp, dialects, type TestApp } from '../../test/helper.js';
import { addSource, search } from '../../test/support/knowledge.js';
import { startKnowledgeWorker, type KnowledgeWorker } from './jobs.js';
import { acronymsIn, EMPTY_LEXICON, groupMatches, MAX_RESPELLED_WORDS, queryGroups, respellText } from './search/lexicon.js';
import { isQueryStopword } from './search/query.js';
import { commonWords, MISSING_COMMON, rerank } from './search/rerank.js';
import { codeWords, splitWords, stem } from './search/terms.js';
import { knowledgeTools, KNOWLEDGE_TOOL, LONG_MIN_MATCH, MIN_MATCH, NOTHING_FOUND, requiredMatch, type KnowledgeToolOutput } from './tool.js';

describe('what search learns from the content', () => {
  it('splits camelCase, snake_case and kebab-case identifiers, and keeps names whole', () => {
    expect(splitWords('Set bodyLimit, max_body_size and body-limit on PostgreSQL')).toEqual([
      'set', 'body', 'limit', 'max', 'body', 'size', 'and', 'body', 'limit', 'on', 'postgresql',
    ]);
    // A word that starts with a digit is not an identifier: "2FA" is one word, as the databases index it.
    expect(splitWords('Turn on 2FA and utf8Mode')).toEqual(['turn', 'on', '2fa', 'and', 'utf8', 'mode']);
  });

  it('finds the acronyms a text defines, either way round', () => {
    expect(acronymsIn('It uses Write-Ahead Logging (WAL) and multiversion concurrency control (MVCC).')).toEqual([
      ['wal', 'write ahead logging'],
      ['mvcc', 'multiversion concurrency control'],
    ]);
    expect(acronymsIn('Enable TLS (transport layer security) first.')).toEqual([['tls', 'transport layer security']]);
    // Parentheses that do not spell the words are not an acronym.
    expect(acronymsIn('Pick a plan (PRO) today.')).toEqual([]);
  });

  it('asks MIN_MATCH of a short question and less of a long one, never under LONG_MIN_MATCH', () => {
    expect(requiredMatch(2)).toBe(MIN_MATCH);
    expect(requiredMatch(7)).toBe(MIN_MATCH);
    expect(requiredMatch(8)).toBeCloseTo((MIN_MATCH * 7) / 8);
    expect(requiredMatch(10)).toBeLessThan(requiredMatch(8));
    expect(requiredMatch(30)).toBe(LONG_MIN_MATCH);
  });

  it('reads the words of code spans', () => {
    expect(codeWords('Use `git filter-repo --replace-text` on a `Cargo.toml`, not git gc')).toEqual(new Set(['git', 'filter', 'repo', 'replace', 'text', 'cargo', 'toml']));
    expect(codeWords('no code here, and an unclosed ` tick')).toEqual(new Set());
    // An option is code without backticks too, as a chat types it; a dash in a word is not.
    expect(codeWords('git filter-repo --replace-text, a well-known tool -- or not')).toEqual(new Set(['replace', 'text']));
  });

  it("weighs a missing word less when it is everyday English the content uses, and a name or a word it never uses fully", () => {
    const df = new Map([['keep', 3], ['refus', 2], ['voucher', 4], ['pgbounc', 1]]);
    const lexicon = { ...EMPTY_LEXICON, size: 20, chunks: 20, df, avgLength: 10 };
    expect(commonWords([['keeps']], lexicon)).toBe(true);
    // A word the content never uses, a name, a word English does not know, digits: the question's topic.
    expect(commonWords([['lamp']], lexicon)).toBe(false);
    expect(commonWords([['keeps']], lexicon, new Set(['keeps']))).toBe(false);
    expect(commonWords([['pgbouncer']], lexicon)).toBe(false);
    const groups = [[['voucher']], [['keeps']], [['refused']]];
    const hit = { chunkId: 'c', sourceId: 's', title: 'Vouchers', url: null, headingPath: [], text: 'A voucher is refused when it has expired.', score: 1 };
    const [covered] = rerank([hit], groups, lexicon);
    // voucher and refused held, keeps missing at MISSING_COMMON of its weight.
    const w = (stem: string) => Math.log(1 + (20 - df.get(stem)! + 0.5) / (df.get(stem)! + 0.5));
    const held = w('voucher') + w('refus');
    expect(covered!.coverage).toBeCloseTo(held / (held + MISSING_COMMON * w('keep')), 3);
    const [lamp] = rerank([hit], [[['voucher']], [['lamp']]], lexicon);
    expect(lamp!.coverage).toBeCloseTo(w('voucher') / (w('voucher') + Math.log(1 + 20.5 / 0.5)), 3);
  });

  it('weighs a misspelt or short word as the word it is searched as', () => {
    const df = new Map([['password', 3], ['peopl', 2], ['sqlit', 4]]);
    const lexicon = { ...EMPTY_LEXICON, size: 20, chunks: 20, df, avgLength: 10 };
    // Neither the content nor English knows "pasword" or "ppl": they stand for everyday words it uses.
    expect(commonWords([['pasword'], ['password']], lexicon)).toBe(true);
    expect(commonWords([['ppl'], ['people']], lexicon)).toBe(true);
    // A name misspelt is still a name: written as one, or read as a word English does not know.
    expect(commonWords([['sqliite'], ['sqlite']], lexicon, new Set(['sqliite']))).toBe(false);
    expect(commonWords([['sqliite'], ['sqlite']], lexicon)).toBe(false);
    expect(commonWords([['devops']], lexicon)).toBe(false);
  });

  it('turns a question into groups of alternatives', () => {
    const lexicon = { ...EMPTY_LEXICON, joined: new Map([['body limit', 'bodylimit']]), aliases: new Map([['wal', ['write ahead logging']]]) };
    expect(queryGroups('How do I raise the body limit with WAL?', lexicon, isQueryStopword)).toEqual([
      [['raise']],
      [['body', 'limit'], ['bodylimit']],
      [['wal'], ['write', 'ahead', 'logging']],
    ]);
  });

  it("brings in an everyday synonym the content uses, only for a question word it never uses", () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map([['parcel', 2], ['login', 3], ['sign', 1], ['memory', 4], ['ram', 1]]) };
    expect(queryGroups('my package never came', lexicon, isQueryStopword)).toEqual([[['package'], ['parcel']], [['never']], [['came']]]);
    // A member with a stopword in it ("log in") is recognised; its other members the content uses are searched.
    expect(queryGroups("I can't log in", lexicon, isQueryStopword)).toEqual([[['log'], ['login']]]);
    // The content says "RAM" itself: its own word finds its passages, "memory" would only blur them.
    expect(queryGroups('add RAM', lexicon, isQueryStopword)).toEqual([[['add']], [['ram']]]);
    // Nothing the content uses: the word stays alone.
    expect(queryGroups('postage', lexicon, isQueryStopword)).toEqual([[['postage']]]);
  });

  it('reads the short forms people type in a chat as their words', () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['message', 'worker', 'database', 'connection', 'password'].map((w) => [stem(w), 2])) };
    expect(queryGroups('send a msg to a worker', lexicon, isQueryStopword)).toEqual([[['send']], [['msg'], ['message']], [['worker']]]);
    expect(queryGroups('how many dbs per connection', lexicon, isQueryStopword)).toEqual([[['dbs'], ['databases']], [['per']], [['connection']]]);
    expect(queryGroups('reset my pwd', lexicon, isQueryStopword)).toEqual([[['reset']], [['pwd'], ['password']]]);
  });

  it("reads a message's misspellings as the content's words, and leaves everything else as written", () => {
    const lexicon = { ...EMPTY_LEXICON, size: 10, df: new Map(['return', 'item', 'password', 'reset', 'litestream'].map((w) => [stem(w), 2])) };
    expect(respellText('How do I retrun an itme? My pasword!', lexicon)).toBe('How do I return an item? My password!');
    // Words English knows stay, even one edit from the content's ("rest", "items"); so do words
    // too short to tell and a name the content does not hold. A misspelt name it holds is read as
    // that name, in lower case as the search reads it.
    expect(respellText('Give it a rest: the items, an itm, Kubernetes, Litestreem', lexicon)).toBe('Give it a rest: the items, an itm, Kubernetes, litestream');
    // The message spells the word itself, with only its end changed: two words, not a slip.
    expect(respellText('resets and reset', lexicon)).toBe('resets and reset');
    // Stopwords, which WordNet does not list, stay even one edit from the content's words.
    const near = { ...lexicon, df: new Map([...lexicon.df, ...['width', 'form', 'info', 'world'].map((w): [string, number] => [stem(w), 3])]) };
    expect(respellText('Could I pay with PayPal from Germany into a world account?', near)).toBe('Could I pay with PayPal from Germany into a world account?');
    // `known` keeps each word's reading for the next messages of a report: read from it, not again.
    const known = new Map<string, string | null>([['itme', 'idem']]);
    expect(respellText('an itme', lexicon, known)).toBe('an idem');
    respellText('my pasword', lexicon, known);
    expect(known.get('pasword')).toBe('password');
    // A misspelt stopword is read as the stopword, not as the content word one edit away.
    expect(respellText('How woudl I retrun it?', { ...near, df: new Map([...near.df, [stem('would'), 2], [stem('wound'), 3]]) })).toBe('How would I return it?');
    // The work is bounded: MAX_RESPELLED_WORDS tries a message, none on a word longer than any slip.
    const slips = Array.from({ length: MAX_RESPELLED_WORDS + 2 }, () => 'itme').join(' ');
    expect(respellText(slips, lexicon)).toBe([...Array(MAX_RESPELLED_WORDS).fill('item'), 'itme', 'itme'].join(' '));
    const long = { ...lexicon, df: new Map([...lexicon.df, [stem('internationalizationsettings'), 2]]) };
    expect(respellText('internationalizationsetings itme', long)).toBe('internationalizationsetings item');
  });

  it('estimates how many of the project chunks a group matches, from a sample of them', () => {
    // 100 chunks sampled out of 10,000.
    const lexicon = { ...EMPTY_LEXICON, size: 100, chunks: 10_000, df: new Map([['parcel', 40], ['locker', 5], ['courier', 10]]) };
    expect(groupMatches(lexicon, [['parcel']])).toBe(4_000);
    // A phrase as many as its rarest word; alternatives add up.
    expect(groupMatches(lexicon, [['parcel', 'lockers']])).toBe(500);
    expect(groupMatches(lexicon, [['parcel'], ['courier']])).toBe(5_000);
    expect(groupMatches(lexicon, [['unheard']])).toBe(0);
    // Stopwords are not counted; searched alone, they are taken as held by every chunk.
    expect(groupMatches(lexicon, [['this']])).toBe(10_000);
    expect(groupMatches(EMPTY_LEXICON, [['parcel']])).toBe(0);
  });
});

const GUIDE = `# Server guide

## Request size

The bodyLimit option caps the size of a request body in bytes. Requests above it are refused with 413.

## Durability

The database uses Write-Ahead Logging (WAL): changes are written to the log before the data files.

## Delivery

We deliver to the Netherlands, Belgium and Germany within two business days.

## Damage

A parcel that arrives broken is replaced free of charge: send us a photo of it.

## Holidays

Orders placed over Christmas are sent from 2 January.
`;

/** The lexicon at work through the search API and the tool, on both databases. */
describe.each(dialects)('search with the project lexicon ($name)', (dialect) => {
  let t: TestApp;
  let worker: KnowledgeWorker;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({ dialect });
    worker = startKnowledgeWorker(t.deps, { pollMs: 50 });
    projectId = (await createProject(t)).project.id;
    await addSource(t.app, projectId, { type: 'markdown', content: GUIDE });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  /** What the search_knowledge tool hands the model for a question (numbers count on within one tool). */
  const toolFor = () => {
    const tool = knowledgeTools(t.deps.knowledge.search, projectId)[KNOWLEDGE_TOOL]!;
    return (query: string) => tool.execute!({ query }, { toolCallId: 'c', messages: [] }) as Promise<KnowledgeToolOutput>;
  };

  it('finds an identifier from its words and a definition from its acronym', async () => {
    const body = await search(t.app, projectId, 'what is the body limit');
    expect(body.results[0].headingPath).toEqual(['Server guide', 'Request size']);
    const wal = await search(t.app, projectId, 'how does WAL protect my data');
    expect(wal.results[0].headingPath).toEqual(['Server guide', 'Durability']);
    const spelled = await search(t.app, projectId, 'is write ahead logging used');
    expect(spelled.results[0].headingPath).toEqual(['Server guide', 'Durability']);
  });

  it("finds the content's word for a customer's everyday one, and the tool counts it as covering the question", async () => {
    const found = await search(t.app, projectId, 'my package arrived smashed');
    expect(found.results[0].headingPath).toEqual(['Server guide', 'Damage']);
    const out = await toolFor()('my package arrived smashed');
    expect(out.found).toBe(true);
    expect(out.results[0]).toMatchObject({ headingPath: ['Server guide', 'Damage'] });
  });

  it('finds the passage a misspelled question asks for, and counts the word as covered', async () => {
    const found = await search(t.app, projectId, 'it arived brokken');
    expect(found.results[0].headingPath).toEqual(['Server guide', 'Damage']);
    const out = await toolFor()('Do you delivr to Belgum?');
    expect(out).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Delivery'] }] });
  });

  it("finds the content's word through WordNet for a word no everyday set has", async () => {
    const found = await search(t.app, projectId, 'what about xmas?');
    expect(found.results[0].headingPath).toEqual(['Server guide', 'Holidays']);
    const out = await toolFor()('what about xmas?');
    expect(out).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Holidays'] }] });
  });

  it('hands the model only passages that cover the question, and says when nothing does', async () => {
    const run = toolFor();
    const found = await run('Do you deliver to Belgium?');
    expect(found.found).toBe(true);
    expect(found.results[0]).toMatchObject({ n: 1, headingPath: ['Server guide', 'Delivery'] });
    expect(found.results.every((r) => r.match >= MIN_MATCH)).toBe(true);
    // Numbers keep counting within one answer, so [n] names one passage.
    const again = await run('body limit');
    expect(again.results[0]!.n).toBe(found.results.length + 1);
    const mars = await run('Do you deliver to Mars?');
    expect(mars).toMatchObject({ found: false, results: [], note: NOTHING_FOUND });
    expect(mars.terms.find((x) => x.forms[0] === 'mars')!.weight).toBeGreaterThan(mars.terms.find((x) => x.forms[0] === 'deliver')!.weight);
  });

  it('weighs a misspelt everyday word a tenth, as the word it is taken for', async () => {
    // "ordres" is "orders", everyday English the guide uses (Holidays): the delivery passage may lack it.
    const misspelt = await toolFor()('Do you deliver ordres to Belgium?');
    expect(misspelt).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Delivery'] }] });
  });

  it('leaves out a negation typed without its apostrophe', async () => {
    // "cant" is an English word no help content uses, but typed in a chat it is "can't".
    const cant = await toolFor()('why cant you deliver to Belgium');
    expect(cant).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Delivery'] }] });
    expect(cant.terms.map((x) => x.forms[0])).not.toContain('cant');
  });

  it('weighs a word typed as code fully, as the name it is, where the everyday word weighs a tenth', async () => {
    // "orders" is everyday English the guide uses (Holidays): the delivery passage may lack it.
    const plain = await toolFor()('Do you deliver orders to Belgium?');
    expect(plain).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Delivery'] }] });
    // Typed as code it is an identifier the question is about, which the passage does not hold.
    const code = await toolFor()('Do you deliver `orders` to Belgium?');
    expect(code).toMatchObject({ found: false, results: [] });
    // An option typed without backticks, as a chat does, is code too.
    const option = await toolFor()('Do you deliver --orders to Belgium?');
    expect(option).toMatchObject({ found: false, results: [] });
  });

  it('asks less of a passage for a long message, whose story the passage need not repeat', async () => {
    // Its story is told in words the guide uses elsewhere (see MISSING_COMMON).
    const long = await toolFor()('Can you replace a parcel that arrived broken after it was sent over Christmas to our business in Belgium if we send you a photo of it?');
    const weighted = long.terms.filter((x) => x.weight > 0).length;
    expect(weighted).toBeGreaterThan(7);
    // The passage on damage holds less than MIN_MATCH of all these words, and is what it asks.
    expect(long).toMatchObject({ found: true, results: [{ headingPath: ['Server guide', 'Damage'] }] });
    expect(long.results[0]!.match).toBeLessThan(MIN_MATCH);
    expect(long.results.every((r) => r.match >= requiredMatch(weighted))).toBe(true);
    // Asked short, with a word the guide never uses, it is not enough.
    const short = await toolFor()('Will you replace a broken lamp?');
    expect(short.found).toBe(false);
  });

  it("learns another node's new content again once its sources changed", async () => {
    // A second node on the same database: it learns the lexicon from what is there now.
    const b = await createTestApp({ dialect, store: t.deps.store });
    try {
      const identifier = (r: { results: { headingPath: string[] }[] }) => r.results[0]?.headingPath;
      expect(identifier(await search(b.app, projectId, 'what is the quux limit'))).not.toEqual(['Tuning', 'Backpressure']);
      // This node ingests a page naming a new identifier; only a lexicon learned again splits it.
      await addSource(t.app, projectId, { type: 'markdown', content: '# Tuning\n\n## Backpressure\n\nRaise quuxLimit when the queue backs up.' });
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31_000 });
      try {
        // The check finds the sources changed and learns again while the old lexicon serves.
        await search(b.app, projectId, 'what is the quux limit');
        await vi.waitFor(async () => expect(identifier(await search(b.app, projectId, 'what is the quux limit'))).toEqual(['Tuning', 'Backpressure']), { timeout: 10_000 });
      } finally {
        vi.useRealTimers();
      }
    } finally {
      await b.close();
    }
  });
});
