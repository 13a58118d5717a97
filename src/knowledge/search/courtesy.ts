/**
 * The courtesies around a question: greetings, thanks and sign-offs, apologies, and the words that
 * announce a question ("Hi! Quick question: … Thanks in advance."). They say nothing an answer has
 * to hold, but their words are rare in help content, so the search would weigh them as the
 * question's most distinctive terms, and the coverage check would decline a question whose page
 * was found because that page does not say "cheers". People write to a support chat this way all
 * the time; a model writing its own search query leaves them out, and so does this.
 *
 * Only whole phrases go, where they stand as courtesies: a greeting at the start of the message or
 * of one of its sentences, thanks and sign-offs at its end (with a name after them), apologies and
 * announcements anywhere. A word of a courtesy used in a question ("how do I thank a courier") stays.
 */

const WHO = String.raw`(?:there|all|everyone|everybody|guys|folks|team|support|friends|people|y'?all|support team|community)`;
const GREETING = String.raw`(?:hi+|hel+o+|hal+o+|hey+a?|hiya|howdy|greetings|yo|good (?:morning|afternoon|evening|day)|dear (?:support|team|all|sir(?:\s*(?:\/|or)\s*madam)?|madam))(?:,? ${WHO})?(?! world)`;
const WELL_WISH = String.raw`(?:i )?hope (?:you(?:'re| are|r)|your|all is|everyone is|this finds you) (?:well|doing well|good|fine|having a (?:good|great|nice) (?:day|week|weekend))`;
const THANKS = String.raw`(?:(?:many |a million |big )?thanks|thank you|thank u|thank ya|thx|thnx|thanx|thnks|thks|tyvm|ty|tia|cheers|much appreciated|thanks alot|(?:best|kind|warm)(?:est)? regards|regards|best wishes|yours (?:faithfully|sincerely|truly)|sincerely|appreciate it|looking forward to (?:your|a) (?:reply|response|answer)|looking forward to hearing from you)(?: (?:a lot|so much|very much|a bunch|in advance|again|for (?:your|any|the|all) (?:help|time|answers?|support|reading)|for reading))*`;
const HELP_APPRECIATED = String.raw`(?:any|all|your|some) (?:help|advice|pointers|ideas|input|suggestions)(?: (?:on this|here))? (?:(?:is|would be|will be|are|would be very) )?(?:much |greatly |really |very much |highly |truly )?appreciated|(?:i|we) (?:would|'d) be (?:very |really )?grateful (?:if you could help(?: me| us)?(?: with the following)?|for (?:any|your) help)|(?:i|we)(?: would|'d)? (?:really |greatly )?appreciate (?:any|your|some|the) (?:help|advice|pointers|ideas|input|suggestions)`;
const APOLOGY = String.raw`(?:sorry|apologies) (?:if|for|that)? ?(?:this is |this|it'?s |asking |the )?(?:such )?(?:a |an )?(?:dumb|stupid|silly|basic|newbie|noob|beginner|simple|obvious|naive|trivial) question|sorry to (?:bother|trouble|disturb) (?:you|you guys|you all)?|sorry for (?:my|the) (?:bad |poor )?english`;
const ANNOUNCEMENT = String.raw`(?:(?:a |one )?(?:quick|simple|small|stupid|dumb|silly|newbie|noob|beginner|basic|short) question(?: for you)?|(?:i|we) (?:have|got) a (?:quick |small |simple |short )?question(?: for you)?|(?:i was|i'm|i am|was|just|i've been|i have been) wondering(?: if| whether)?|i wonder(?: if| whether)?|(?:newbie|noob|beginner) here|(?:i'm|i am) (?:a )?(?:newbie|noob|beginner)|(?:i'm|i am) new to (?:all )?(?:of )?this|not sure if this is the right place(?: to ask)?(?: but)?|sent from my (?:iphone|ipad|phone|android|mobile|samsung))`;

/** Where a sentence starts: the message's start, or after a sentence's end or a line break. */
const START = String.raw`(^|[.!?:;\n]\s*)`;
/** Where a sign-off starts: a sentence's start, or any space (chat messages often end without a full stop: "… to Germany Kind regards"). */
const SIGN_OFF_START = String.raw`(^|[.!?:;\s]\s*)`;

const PATTERNS: RegExp[] = [
  new RegExp(`${START}(?:${GREETING})\\b[\\s,!.:;-]*`, 'giu'),
  new RegExp(`(^|[\\s,.!?;:(-])(?:${WELL_WISH}|${APOLOGY}|${ANNOUNCEMENT}|${HELP_APPRECIATED})\\b[\\s,!.:;)-]*`, 'giu'),
  // Thanks and sign-offs end the message.
  new RegExp(`${SIGN_OFF_START}(?:${THANKS})\\b[\\s,!.:;)-]*$`, 'giu'),
  // "Best" signs off only as a sentence of its own ("Which is best? Best, Tom").
  new RegExp(`${START}best\\b[\\s,!.:;)-]*$`, 'giu'),
];

/** A name signed after thanks or a sign-off ("Many thanks, Anna", "Cheers - Tom"). */
const SIGNED = /(?<![\s,–—-])[\s,–—-]+\p{Lu}(?:[\p{Ll}'’-]+|\.)(?: \p{Lu}(?:[\p{Ll}'’-]+|\.)){0,2}[.!]?\s*$/u;
const SIGN_OFF = new RegExp(`(?:${SIGN_OFF_START}(?:${THANKS})|${START}best)[\\s,!.:;)-]*$`, 'iu');

/** The message without the name signed at its end, when a sign-off stands before it. */
function unsigned(text: string): string {
  const name = SIGNED.exec(text);
  return name && SIGN_OFF.test(text.slice(0, name.index)) ? text.slice(0, name.index) : text;
}

/** The question without its courtesies; the question itself when nothing else is left. */
export function withoutCourtesies(question: string): string {
  // Each run of spaces as one (a line break where it holds one), so no pattern rescans a long run.
  // Curly apostrophes read as straight ones ("I’m new to this").
  let text = question.replace(/\s+/g, (run) => (run.includes('\n') ? '\n' : ' ')).replace(/’/g, "'");
  // Sign-offs stack ("Thanks in advance. Cheers, Tom"): strip from the end until nothing changes.
  for (let pass = 0; pass < 4; pass++) {
    const before = text;
    text = unsigned(text);
    for (const pattern of PATTERNS) text = text.replace(pattern, (_match, lead: string) => (/[.!?:;\n]/.test(lead) ? `${lead.trimEnd()} ` : lead ? ' ' : ''));
    text = text.trim();
    if (text === before) break;
  }
  return /[\p{L}\p{N}]/u.test(text) ? text : question;
}

/** How a question opens when it asks something (a message's question often lacks its question mark). */
const ASKS = /^(?:how|what|what's|why|when|where|which|who|whom|whose|can|could|do|does|did|is|are|was|were|will|would|should|shall|may|might|must|has|have|had|am|isn't|aren't|doesn't|don't|can't|won't)\b/i;

/**
 * A word that points to something the question does not name ("Do you ship there?", "Can I pay
 * with it?"): what it asks about is in the context. "Is there…" and "Is it possible…" point nowhere.
 */
const POINTS_AWAY = /\b(?:it|there|this|these|those|them|they)\b/i;
const POINTS_NOWHERE = /\b(?:is|are|was|were|will|would) there\b|\bthere (?:is|are|was|were)\b|\bis it (?:possible|ok|okay|safe|normal|true)\b/gi;

/**
 * The sentences of a message that ask (ending with a question mark, or opening as a question does),
 * when it also has sentences that only give context ("Long-time customer here. How long do I have
 * to return something?"). Null when every sentence asks or none does, and when what it asks points
 * into the context ("Do you ship there? I live on Mars."): then the context is part of the question.
 */
export function askingSentences(message: string): string | null {
  const sentences = message
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
  const asks = sentences.filter((s) => s.endsWith('?') || ASKS.test(s));
  if (asks.length === 0 || asks.length === sentences.length) return null;
  const asking = asks.join(' ');
  return POINTS_AWAY.test(asking.replace(POINTS_NOWHERE, ' ')) ? null : asking;
}
