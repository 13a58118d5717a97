import { describe, expect, it } from 'vitest';
import { answerFromHits, asksHow, DONT_KNOW, looksLikeCode, namesApi } from './knowledge.js';

const hit = (text: string, sourceId = 'ks_a', title = 'Identity', chunkId = `chunk_${sourceId}`, headingPath = [title]) => ({
  chunkId,
  sourceId,
  title,
  url: null,
  headingPath,
  text,
  score: 1,
});

describe('builtin knowledge answers', () => {
  it('tells code and commands from prose', () => {
    expect(looksLikeCode('curl -s -X POST $API/identity/verify -H "x-api-key: $KEY"')).toBe(true);
    expect(looksLikeCode('Wrong signature: 401 {"verified":false,"error":"Invalid HMAC signature"}.')).toBe(true);
    expect(looksLikeCode('OPENAI_COMPATIBLE_BASE_URL=http://localhost:11434/v1 npm start')).toBe(true);
    expect(looksLikeCode('Your server signs the user id with the HMAC secret and the widget sends the signature.')).toBe(false);
    // Python: a block's header, and a line of an interactive session.
    expect(looksLikeCode('and sum(c.isdigit() for c in password) >= 3):')).toBe(true);
    expect(looksLikeCode(">>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])")).toBe(true);
    expect(looksLikeCode('The following options are accepted by the server (all of them optional):')).toBe(false);
    // A variable's value is code on its own, not where a sentence names it (Git's manual).
    expect(looksLikeCode('echo $HOME')).toBe(true);
    expect(looksLikeCode('Patterns which are specific to one user’s workflow should go into the $GIT_DIR/info/exclude file.')).toBe(false);
  });

  it('quotes the prose that answers, not a command that mentions the same words, and cites it', () => {
    const text = [
      'curl -s -X POST $API/identity/verify -H "x-api-key: $KEY" -d \'{"userId":"u1","hmac":"…"}\'',
      'To verify a user, your server signs the user id with the HMAC secret and sends the hex signature.',
      'The signature is compared in constant time.',
    ].join('\n');
    const answer = answerFromHits('How do I verify a user with HMAC?', [hit(text)]);
    expect(answer.sources).toEqual([{ sourceId: 'ks_a', type: 'document', title: 'Identity' }]);
    expect(answer.text).toBe('To verify a user, your server signs the user id with the HMAC secret and sends the hex signature. The signature is compared in constant time. [1]');
  });

  it('cites only the sources it quotes, numbered in quoting order', () => {
    const hits = [
      hit('Shipping takes 3 to 5 business days worldwide.', 'ks_ship', 'Shipping'),
      hit('Refunds are issued within 14 days of the return arriving.', 'ks_refund', 'Refunds'),
    ];
    const answer = answerFromHits('When are refunds issued?', hits);
    expect(answer.sources.map((s) => s.sourceId)).toEqual(['ks_refund']);
    expect(answer.text).toMatch(/Refunds are issued within 14 days[^[]*\[1\]$/);
  });

  it('says it does not know rather than quoting a weak match', () => {
    expect(answerFromHits('Can I pay with a gift card?', [hit('Refunds are issued within 14 days.', 'ks_b', 'Refunds')])).toEqual({ text: DONT_KNOW, sources: [] });
  });

  it('quotes the sentences that carry the rarest terms, not a table or a command line', () => {
    const text = [
      'Setting | Default | Unit',
      'bodyLimit | 1048576 | bytes',
      'npx answerdesk serve --body-limit 2097152',
      'The body limit caps the size of one request in bytes. A larger request is refused with status 413.',
    ].join('\n');
    const terms = [
      { forms: [['body', 'limit'], ['bodylimit']], weight: 4 },
      { forms: [['refus']], weight: 2 },
    ];
    const answer = answerFromHits('What happens above the body limit, is it refused?', [hit(text)], terms);
    expect(answer.text).toBe('The body limit caps the size of one request in bytes. A larger request is refused with status 413. [1]');
  });

  it('leads with the first (best) passage the search handed over', () => {
    const hits = [hit('Express parcels arrive the next business day.', 'ks_express', 'Express'), hit('Standard parcels arrive within three business days.', 'ks_std', 'Standard')];
    const answer = answerFromHits('When do parcels arrive?', hits, [{ forms: [['parcel']], weight: 2 }, { forms: [['arriv']], weight: 2 }]);
    expect(answer.sources.map((s) => s.sourceId)).toEqual(['ks_express', 'ks_std']);
    expect(answer.text.startsWith('Express parcels arrive')).toBe(true);
  });

  it('quotes the passage of a source whose sentence answers, not the first one the search ranked', () => {
    const hits = [
      hit("We can't add a promo code to an order after it has been placed.", 'ks_promo', 'Promo codes', 'chunk_late'),
      hit('You can use one promo code per order. A promo code can be combined with a gift card.', 'ks_promo', 'Promo codes', 'chunk_using'),
    ];
    const terms = [
      { forms: [['promo']], weight: 3 },
      { forms: [['code']], weight: 2 },
      { forms: [['use']], weight: 1.5 },
      { forms: [['order']], weight: 0.5 },
    ];
    const answer = answerFromHits('Can I use two promo codes on one order?', hits, terms);
    expect(answer.text).toBe('You can use one promo code per order. A promo code can be combined with a gift card. [1]');
    expect(answer.sources.map((s) => s.sourceId)).toEqual(['ks_promo']);
  });

  it('quotes a procedure from its first step for "how do I…", and only the step that answers a question of fact', () => {
    const text = 'To send a parcel back:\n\n1. Sign in and open Orders.\n2. Choose the order.\n3. Tape the return label over the old address label.\n4. Hand the parcel to any post office.';
    const terms = [{ forms: [['label']], weight: 3 }, { forms: [['address']], weight: 2 }];
    expect(answerFromHits('How do I use the label?', [hit(text)], terms).text).toBe(
      'To send a parcel back:\n1. Sign in and open Orders.\n2. Choose the order.\n3. Tape the return label over the old address label.\n4. Hand the parcel to any post office. [1]',
    );
    expect(answerFromHits('Does the label cover the address label?', [hit(text)], terms).text).toBe(
      '3. Tape the return label over the old address label.\n4. Hand the parcel to any post office. [1]',
    );
    // A year that starts a sentence is no step.
    expect(answerFromHits('When did the label change?', [hit('2024. The label changed to a QR code at every post office.')], terms).text).toBe(
      '2024. The label changed to a QR code at every post office. [1]',
    );
    expect([asksHow('How can we export a table?'), asksHow('how to reset it'), asksHow('How long do I have?'), asksHow('How many workers run?')]).toEqual([true, true, false, false]);
  });

  it('quotes the sentence that states the kind of fact asked for ("how long…", "the default…")', () => {
    const text =
      'Register the return from your account before you send anything back. You have 30 days from the day you receive your order to register a return. Items must be unused.';
    const terms = [{ forms: [['return']], weight: 1.3 }];
    expect(answerFromHits('How long do I have to return something?', [hit(text)], terms).text).toBe(
      'You have 30 days from the day you receive your order to register a return. [1]',
    );
    // Without a question of that kind, the first sentence to cover the question still leads.
    expect(answerFromHits('Can I return something?', [hit(text)], terms).text).toMatch(/^Register the return from your account/);
    const settings = 'Shared buffers should be sized with care on a busy server, as the next section explains. The shared buffers default is typically 128 megabytes (128MB).';
    const shared = [{ forms: [['shar', 'buffer']], weight: 3 }];
    expect(answerFromHits('default value of shared buffers', [hit(settings)], shared).text).toMatch(/^The shared buffers default is typically 128 megabytes/);
  });

  it('reads an SQL comment as code, not as prose whose dashes are a list bullet', () => {
    const text = [
      'FTS5 returns rows in an arbitrary order unless the query sorts them.',
      '-- Return the matching rows, best match first, sorted by rank relevance.',
    ].join('\n');
    const terms = [{ forms: [['rank']], weight: 3 }, { forms: [['match']], weight: 2 }, { forms: [['row']], weight: 1 }];
    expect(looksLikeCode('-- Return the matching rows, best match first.')).toBe(true);
    expect(answerFromHits('How do I sort matching rows by rank?', [hit(text)], terms).text).toBe('FTS5 returns rows in an arbitrary order unless the query sorts them. [1]');
  });

  it('quotes a definition-list entry with its term and stops before the next term', () => {
    const text = [
      'temp_buffers (integer)',
      ': Sets the maximum amount of memory used for temporary buffers within each database session.',
      'default_toast_compression (enum)',
      ': This variable sets the default TOAST compression method for values of compressible columns. The default compression method is pglz.',
      'temp_tablespaces (string)',
      ': This variable specifies tablespaces in which to create temporary objects.',
    ].join('\n\n');
    const terms = [{ forms: [['toast']], weight: 4 }, { forms: [['compression']], weight: 3 }, { forms: [['default']], weight: 1 }];
    expect(answerFromHits('What is the default TOAST compression?', [hit(text)], terms).text).toBe(
      'default_toast_compression (enum): This variable sets the default TOAST compression method for values of compressible columns. The default compression method is pglz. [1]',
    );
  });

  it("reads a sentence of a definition-list entry with its term's words, the name of what it is about", () => {
    const text = [
      'shutdown_grace (seconds)',
      ': The shutdown grace period is how long a stopping node waits for the answers in progress before it closes their streams. ' +
        'Answers still running then end with an error that the widget shows to the visitor, with a button to ask again. ' +
        'Streams that end this way are stored with the error outcome, and the conversation stays open for the next message, on this node or another. ' +
        'The wait starts when the node receives its stop signal and stops taking new answers, while health checks report it as draining. ' +
        'A value of zero closes every stream at once, as a restart without a drain does.',
      'shutdown_signal (string)',
      ': The signal that starts a drain.',
    ].join('\n\n');
    const terms = [{ forms: [['shutdown', 'grac']], weight: 4 }, { forms: [['zero']], weight: 2 }];
    // The sentence that answers names the setting only through its entry's term.
    expect(answerFromHits('Can shutdown_grace be zero?', [hit(text)], terms).text).toBe('A value of zero closes every stream at once, as a restart without a drain does. [1]');
  });

  it('reads a hyphenated word as the search does, as its parts: "--force-with-lease" holds "force" and "lease"', () => {
    const text = [
      '-f, --force',
      ': Usually, the command refuses to update a remote ref that is not an ancestor of the local ref. To force a push to only one branch, use a + in front of the refspec.',
      '--force-with-lease',
      ': This option overrides that restriction only if the remote ref still points at the commit you expect, so that nobody else’s work is lost.',
    ].join('\n\n');
    // The search splits "--force-with-lease" into "force" and "lease" ("with" is a stopword).
    const terms = [{ forms: [['forc']], weight: 2.5 }, { forms: [['leas']], weight: 5 }, { forms: [['push']], weight: 2 }, { forms: [['plain']], weight: 4 }];
    expect(answerFromHits('When should I push with --force-with-lease instead of plain --force?', [hit(text)], terms).text).toBe(
      '--force-with-lease: This option overrides that restriction only if the remote ref still points at the commit you expect, so that nobody else’s work is lost. [1]',
    );
  });

  it('does not end on an introduction: it quotes what the line introduces when that fits, else stops before it', () => {
    const intro = 'Deleting your account closes it for good after a grace period of 14 days. Before you delete your account, please note:';
    const short = `${intro}\n\n- Gift card balances are lost.\n- Invoices are kept for 7 years.`;
    const terms = [{ forms: [['delet']], weight: 3 }, { forms: [['account']], weight: 1 }];
    expect(answerFromHits('What happens when I delete my account?', [hit(short)], terms).text).toBe(
      `${intro}\n- Gift card balances are lost.\n- Invoices are kept for 7 years. [1]`,
    );
    const long = `${intro}\n\n${Array.from({ length: 6 }, (_, i) => `- Point ${i + 1} about the store credit and gift card balances that are lost when the account goes.`).join('\n')}`;
    expect(answerFromHits('What happens when I delete my account?', [hit(long)], terms).text).toBe(
      'Deleting your account closes it for good after a grace period of 14 days. [1]',
    );
  });
  it('does not quote past a thematic break, even after a line that introduces what follows', () => {
    const text = [
      'PRAGMA cache_spill;',
      '',
      'The cache_spill pragma lets the pager spill dirty cache pages to the database file in the middle of a transaction, as follows:',
      '',
      '---',
      '',
      'PRAGMA case_sensitive_like = boolean;',
      '',
      'The default behaviour of the LIKE operator is to ignore case for ASCII characters.',
    ].join('\n');
    const answer = answerFromHits('When does the pager spill dirty cache pages?', [hit(text)]);
    expect(answer.text).toBe('The cache_spill pragma lets the pager spill dirty cache pages to the database file in the middle of a transaction, as follows: [1]');
  });

  it('reads inline code in a sentence of an API reference as prose', () => {
    const text = [
      '- original {Function} An async function',
      '- Returns: {Function} a callback style function',
      '',
      'Takes an async function (or one that returns a Promise) and returns a function following the error-first callback style, i.e. taking an (err, value) => ... callback as the last argument.',
    ].join('\n');
    const terms = [{ forms: [['callback']], weight: 2 }, { forms: [['style']], weight: 5 }, { forms: [['function']], weight: 1.5 }, { forms: [['return']], weight: 1 }, { forms: [['promis']], weight: 2.5 }];
    expect(answerFromHits('How do I turn a callback-style function into one that returns a promise?', [hit(text)], terms).text).toBe(
      'Takes an async function (or one that returns a Promise) and returns a function following the error-first callback style, i.e. taking an (err, value) => ... callback as the last argument. [1]',
    );
  });

  it('leads an excerpt of an API reference with the heading that names the API, not with a topic heading', () => {
    const text = 'Takes a function following the common error-first callback style and returns a version that returns promises.';
    const terms = [{ forms: [['callback']], weight: 2 }, { forms: [['promis']], weight: 2.5 }];
    const api = hit(text, 'ks_util', 'Util', 'chunk_p', ['Util', 'util.promisify(original)']);
    expect(answerFromHits('How do I get a promise from a callback function?', [api], terms).text).toBe(
      'util.promisify(original): Takes a function following the common error-first callback style and returns a version that returns promises. [1]',
    );
    const topic = hit(text, 'ks_util', 'Util', 'chunk_t', ['Util', 'Error propagation']);
    expect(answerFromHits('How do I get a promise from a callback function?', [topic], terms).text).toBe(`${text} [1]`);
    expect(['util.promisify(original)', 'process.env', '--max-old-space-size=SIZE', 'ERR_REQUIRE_ESM', 'Class: zlib.Gzip', "Event: 'timeout'"].map(namesApi)).toEqual([true, true, true, true, true, true]);
    expect(['No __filename or __dirname', 'Meta-Commands', 'Options', '2.1. Checkpointing', 'Returns policy'].map(namesApi)).toEqual([false, false, false, false, false]);
  });

  it('quotes a second passage of the leading page whose sentence covers the question exactly as well, once', () => {
    const terms = [{ forms: [['callback']], weight: 2 }, { forms: [['promis']], weight: 2.5 }];
    const callbackify = hit('Takes a function that returns a promise and returns one that takes a callback.', 'ks_util', 'Util', 'chunk_c', ['Util', 'util.callbackify(original)']);
    const promisify = hit('Takes a function that takes a callback and returns one that returns a promise.', 'ks_util', 'Util', 'chunk_p', ['Util', 'util.promisify(original)']);
    const weaker = hit('A callback is called once the work is done.', 'ks_util', 'Util', 'chunk_w', ['Util', 'Callbacks']);
    expect(answerFromHits('How do I turn a callback into a promise?', [callbackify, weaker, promisify], terms)).toEqual({
      text:
        'util.callbackify(original): Takes a function that returns a promise and returns one that takes a callback. [1]\n\n' +
        'util.promisify(original): Takes a function that takes a callback and returns one that returns a promise. [1]',
      sources: [expect.objectContaining({ sourceId: 'ks_util' })],
    });
    // A weaker passage is not quoted beside the best; nor is a chunk whose sentence the first
    // excerpt already holds (chunks overlap).
    expect(answerFromHits('How do I turn a callback into a promise?', [callbackify, weaker], terms).text).toBe(
      'util.callbackify(original): Takes a function that returns a promise and returns one that takes a callback. [1]',
    );
    const overlap = hit('Takes a function that returns a promise and returns one that takes a callback.', 'ks_util', 'Util', 'chunk_o', ['Util', 'util.callbackify(original)']);
    expect(answerFromHits('How do I turn a callback into a promise?', [callbackify, overlap], terms).text).toBe(
      'util.callbackify(original): Takes a function that returns a promise and returns one that takes a callback. [1]',
    );
    // Also when that sentence is longer than an excerpt, which then ends cut short.
    const long = `A callback becomes a promise ${'step by step '.repeat(45)}here.`;
    const [first, again] = ['chunk_l1', 'chunk_l2'].map((id) => hit(long, 'ks_util', 'Util', id, ['Util', 'Callbacks']));
    expect(answerFromHits('How do I turn a callback into a promise?', [first!, again!], terms).text.match(/\[1\]/g)).toHaveLength(1);
  });

  it('quotes another passage of the page rather than a section marked deprecated', () => {
    const terms = [{ forms: [['check']], weight: 3.7 }, { forms: [['file']], weight: 1.5 }, { forms: [['exist']], weight: 3 }];
    const hits = [
      hit('Stability: 0 - Deprecated: Use fs.stat() or fs.access() instead.\n\nTest whether or not the given path exists by checking with the file system.', 'ks_fs', 'File system', 'chunk_1', ['File system', 'fs.exists(path, callback)']),
      hit('Using fs.exists() to check for the existence of a file before calling fs.open() is not recommended.', 'ks_fs', 'File system', 'chunk_2', ['File system', 'fs.exists(path, callback)']),
      hit('To check if a file exists without manipulating it afterwards, fs.access() is recommended.', 'ks_fs', 'File system', 'chunk_3', ['File system', 'fs.stat(path[, options], callback)']),
    ];
    const answer = answerFromHits('How do I check if a file exists?', hits, terms);
    expect(answer.text).toBe('fs.stat(path[, options], callback): To check if a file exists without manipulating it afterwards, fs.access() is recommended. [1]');
    // With nothing else on the page, the deprecated section is still quoted.
    expect(answerFromHits('How do I check if a file exists?', hits.slice(0, 2), terms).text).toMatch(/^fs\.exists\(path, callback\): /);
  });

  it('reads columns laid out with runs of spaces as a table, not as a sentence', () => {
    const text = ['.dump ?OBJECTS?            Render database content as SQL', '.recover                 Recover as much data as possible from corrupt db.', 'The .recover command reads a corrupt database and recovers as much data as it can.'].join('\n');
    const terms = [{ forms: [['recover']], weight: 3 }, { forms: [['corrupt']], weight: 3 }];
    expect(answerFromHits('How do I recover a corrupt database?', [hit(text)], terms).text).toBe(
      'The .recover command reads a corrupt database and recovers as much data as it can. [1]',
    );
  });
});
