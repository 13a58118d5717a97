import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, auth, createTestApp, dialects, sendMessage, testSecretBox, type TestApp } from '../../test/helper.js';
import { openCliDatabase, runCli, type CliDatabase } from '../../test/support/cli.js';
import { createProject } from '../projects/projects.js';

// Each command is a Node process compiling TypeScript on the fly: allow for a busy machine.
const SLOW = { timeout: 180_000 };

/**
 * A visitor's message that tries to drive the operator's terminal: a window title (OSC … BEL), a
 * screen clear (CSI), a C1 CSI (U+009B), an OSC left open, a hyperlink (OSC 8 … ST), a bare BEL and
 * a carriage return, and a right-to-left override (U+202E … U+202C), which would show the words
 * between them reversed. The feedback comment has a sequence that Node's stripVTControlCharacters
 * would take "helpful" into.
 */
const HOSTILE = 'Where is \x1b]0;pwned\x07\u202emy\u202c \x1b[2Jparcel\x9b31m?\x07\x1b]2;open\nIt was due \x1b]8;;https://evil.example\x1b\\Monday\x1b]8;;\x1b\\.\r';
const COMMENT = 'Not \x1b[2Jhelpful\x07 at all';
const USER = 'ada\x1b[31m';

/** Any C0 control but newline, DEL, a C1 control or a bidirectional control: what must never reach the terminal. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe.each(dialects)('answerdesk CLI prints stored text without terminal controls on $name', SLOW, (dialect) => {
  let db: CliDatabase;
  let t: TestApp;
  let projectId: string;
  let conversationId: string;

  beforeAll(async () => {
    db = await openCliDatabase(dialect);
    t = await createTestApp({ dialect, store: db.store });
    // The builtin model with no knowledge declines: the question becomes a knowledge gap too.
    const created = await createProject(db.store.db, testSecretBox(), { name: 'Hostile', settings: { model: 'builtin' } });
    projectId = created.project.id;
    const conv = await t.app.inject({ method: 'POST', url: '/api/v1/chat/conversations', headers: auth(created.publicKey), payload: { endUserExternalId: USER } });
    expect(conv.statusCode).toBe(201);
    conversationId = conv.json().conversationId;
    const sent = await sendMessage(t.app, created.publicKey, conversationId, HOSTILE);
    expect(sent.statusCode).toBe(200);
    const messages = await db.store.db.selectFrom('messages').select(['id', 'role', 'content']).where('conversation_id', '=', conversationId).orderBy('seq').execute();
    // Stored as sent: the text is made safe where it is printed, not changed on the way in.
    expect(messages[0]).toMatchObject({ role: 'user', content: HOSTILE });
    const rated = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/feedback',
      headers: auth(created.publicKey),
      payload: { conversationId, messageId: messages[1]!.id, rating: 'NEGATIVE', comment: COMMENT },
    });
    expect(rated.statusCode).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  const cli = (args: string[]) => runCli(args, db.env);

  it('conversation show keeps the visible text and its lines, and drops every control', async () => {
    const shown = await cli(['conversation', 'show', '--project', projectId, conversationId]);
    expect([shown.code, shown.stderr]).toEqual([0, '']);
    expect(shown.stdout).not.toMatch(CONTROL);
    expect(shown.stdout).toMatch(new RegExp(`^Conversation ${conversationId}: ACTIVE, 2 messages, ada, started `));
    expect(shown.stdout).toMatch(/^\[[^\]]+\] User msg_\w+\n {2}Where is my parcel\?\n {2}It was due Monday\.\n/m);
    expect(shown.stdout).toContain('  rated NEGATIVE: Not helpful at all\n');
  });

  it('conversation show --json stays the admin API JSON, the controls escaped', async () => {
    const shown = await cli(['conversation', 'show', '--project', projectId, conversationId, '--json']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(CONTROL);
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/conversations/${conversationId}`, headers: adminAuth() });
    expect(JSON.parse(shown.stdout)).toEqual(api.json());
    expect(JSON.parse(shown.stdout).messages[0].content).toBe(HOSTILE);
  });

  it('tables keep one row per line: conversation list, gaps list, analytics', async () => {
    const listed = await cli(['conversation', 'list', '--project', projectId]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(CONTROL);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatch(new RegExp(`^${conversationId}\\s+ACTIVE\\s+2\\s+\\S+\\s+ada\\s+agent: `));

    const gaps = await cli(['gaps', 'list', '--project', projectId]);
    expect(gaps.code).toBe(0);
    expect(gaps.stdout).not.toMatch(CONTROL);
    expect(gaps.stdout).toMatch(/^gap_\w+\s+1\s+1\s+1\s+\S+\s+Where is my parcel\? It was due Monday\.\n$/m);

    const analytics = await cli(['analytics', '--project', projectId]);
    expect(analytics.code).toBe(0);
    expect(analytics.stdout).not.toMatch(CONTROL);
    expect(analytics.stdout).toMatch(/^1\s+\S+\s+Where is my parcel\? It was due Monday\.$/m);
  });

  it('activity prints each message on one line without controls', async () => {
    const activity = await cli(['activity', '--project', projectId]);
    expect(activity.code).toBe(0);
    expect(activity.stdout).not.toMatch(CONTROL);
    expect(activity.stdout).toMatch(new RegExp(`^\\S+ {2}${conversationId} {2}user ada: Where is my parcel\\? It was due Monday\\.$`, 'm'));
  });
});
