import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, dialects } from '../test/helper.js';
import { startServerProcess, type ServerProcess } from '../test/server-process.js';
import { parseAnswer, streamedText } from '../test/ui-stream.js';
import { waitFor } from '../test/wait.js';
import { base62 } from './lib/ids.js';

/** The value printed after `label` in the start banner. */
const field = (banner: string, label: string) => new RegExp(`^ {2}${label}\\s+(\\S+)$`, 'm').exec(banner)?.[1];

// The demo of a fresh install, through the real server process and the builtin model: the README's
// example questions. Each start compiles TypeScript on the fly.
describe.each(dialects)('the demo shop on $name', { timeout: 240_000 }, (dialect) => {
  let dir: string;
  let server: ServerProcess;
  let key: string;
  let projectId: string;
  let drop = async () => {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-demo-'));
    let databaseUrl = `sqlite:${join(dir, 'answerdesk.db')}`;
    if (dialect.name === 'postgres') {
      const schema = `t_demo_${base62(10).toLowerCase()}`;
      const client = new pg.Client({ connectionString: dialect.url });
      await client.connect();
      await client.query(`create schema ${schema}`);
      await client.end();
      databaseUrl = `${dialect.url}${dialect.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      drop = async () => {
        const c = new pg.Client({ connectionString: dialect.url });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      };
    }
    server = await startServerProcess({ DATABASE_URL: databaseUrl, ANSWERDESK_DEMO: 'true' });
    await waitFor(() => server.output().stderr.includes('CLI          npx answerdesk'), 60_000, 'start banner');
    key = field(server.output().stderr, 'public key')!;
    projectId = field(server.output().stderr, 'project id')!;
    // The help center is ingested in the background: wait until every article is searchable.
    await waitFor(
      async () => {
        const res = await fetch(`${server.base}/api/v1/admin/projects/${projectId}/knowledge`, { headers: adminAuth() });
        const { sources } = (await res.json()) as { sources: Array<{ status: string }> };
        return sources.length >= 20 && sources.every((s) => s.status === 'ready');
      },
      120_000,
      'demo help center ingested',
    );
  });
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A conversation, for several questions: starting one per question would meet the session-creation rate limit. */
  async function startConversation(): Promise<string> {
    const created = await fetch(`${server.base}/api/v1/chat/conversations`, { method: 'POST', headers: { 'x-api-key': key } });
    return ((await created.json()) as { conversationId: string }).conversationId;
  }

  async function ask(question: string, conversation?: string) {
    const conversationId = conversation ?? (await startConversation());
    const res = await fetch(`${server.base}/api/v1/chat/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ conversationId, messages: [{ role: 'user', content: question }] }),
    });
    expect(res.status).toBe(200);
    const { chunks } = await parseAnswer(await res.text());
    const read = await fetch(`${server.base}/api/v1/admin/projects/${projectId}/conversations/${conversationId}`, { headers: adminAuth() });
    const { messages } = (await read.json()) as { messages: Array<{ role: string; outcome?: string | null }> };
    return {
      text: streamedText(chunks),
      tools: chunks.filter((c) => c.type === 'tool-input-available').map((c) => (c as { toolName: string }).toolName),
      cited: chunks.filter((c) => c.type === 'source-document' || c.type === 'source-url').map((c) => (c as { title?: string }).title),
      outcome: messages.at(-1)?.outcome,
    };
  }

  it('offers the two skills and tracks an order through its own demo endpoint', async () => {
    const config = await fetch(`${server.base}/api/v1/widget/config`, { headers: { 'x-api-key': key } });
    expect(((await config.json()) as { availableSkills: Array<{ name: string }> }).availableSkills.map((s) => s.name).sort()).toEqual(['Return an item', 'Track an order']);

    const order = await ask('Where is my order NW-204817?');
    expect(order.tools).toEqual(['track_order']);
    expect(order.outcome).toBe('action');
    expect(order.text).toContain('PostNL');
    expect(order.text).toContain('3SNWGD4820173');
    const unknown = await ask('Where is my order NW-999999?');
    expect(unknown.tools).toEqual(['track_order']);
    expect(unknown.text).toContain('Order not found');
  });

  it("answers the README's example question from the help center and declines what it does not cover", async () => {
    const poBox = await ask('Do you deliver to PO boxes?');
    expect(poBox.outcome).toBe('answered');
    expect(poBox.text).toContain('PO box');
    expect(poBox.text).toContain('Netherlands');
    expect(poBox.cited).toEqual(['Delivery addresses, PO boxes and pickup points']);

    // "How long…" is answered with the sentence that says how long, not the first one about returns.
    const returns = await ask('How long do I have to return something?');
    expect(returns.outcome).toBe('answered');
    expect(returns.text).toContain('30 days');
    expect(returns.cited).toContain('Returns policy');

    // People write to a chat with greetings, thanks and context around the question: the answer
    // covers what they ask, not their courtesies or their context. (One conversation for these.)
    const chat = await startConversation();
    const polite = await ask('Hi there! Quick question: do you deliver to PO boxes? Thanks in advance,\nTom', chat);
    expect(polite.outcome).toBe('answered');
    expect(polite.cited).toEqual(['Delivery addresses, PO boxes and pickup points']);
    const withContext = await ask("I'm sending a birthday present to my sister in Antwerp. Do you deliver to PO boxes?", chat);
    expect(withContext.outcome).toBe('answered');
    expect(withContext.cited).toEqual(['Delivery addresses, PO boxes and pickup points']);
    // Context is left out only when the question names what it asks about: "there" and "it" point
    // into the context, which then counts.
    for (const question of ['Hello team, hope you are well. Do you ship to Mars? Many thanks!', 'Do you ship there? I live on Mars.', 'I have a Bitcoin wallet. Can I pay with it?']) {
      const answer = await ask(question, chat);
      expect(answer.outcome, question).toBe('declined');
      expect(answer.cited, question).toEqual([]);
    }

    // People misspell and write in chat shorthand: a word one edit from one of the content's, or from
    // a word that names nothing, is read as that word, and "pls" or "thx" as a courtesy; a misspelt
    // name the content lacks still finds nothing.
    const typo = await ask('How long do I have to retrun somthing?', chat);
    expect(typo.outcome).toBe('answered');
    expect(typo.text).toContain('30 days');
    expect(typo.cited).toContain('Returns policy');
    const shorthand = await ask('helo how long do i have to return smth pls? thx', chat);
    expect(shorthand.outcome).toBe('answered');
    expect(shorthand.text).toContain('30 days');
    const boxes = await ask('Do you delivr to PO boxs?', chat);
    expect(boxes.outcome).toBe('answered');
    expect(boxes.cited).toEqual(['Delivery addresses, PO boxes and pickup points']);
    for (const question of ['Do you ship to Marss?', 'Can I pay with Bitcoinn?']) {
      const answer = await ask(question, chat);
      expect(answer.outcome, question).toBe('declined');
      expect(answer.cited, question).toEqual([]);
    }

    for (const question of ['Do you ship to Mars?', 'Can I pay with Bitcoin?']) {
      const answer = await ask(question);
      expect(answer.outcome, question).toBe('declined');
      expect(answer.cited, question).toEqual([]);
      // It offers what it can do instead: the demo's skills by their names, not a tool's name.
      // (Both skills were created in the same moment, so either may come first.)
      expect(answer.text, question).toMatch(/Other things I can help with: (Track an order; Return an item|Return an item; Track an order)\./);
      expect(answer.text, question).not.toMatch(/track order|request handoff/i);
    }
  });
});
