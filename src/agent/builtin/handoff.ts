import { clipText } from '../../lib/nul.js';
import { HANDOFF_REPLY, HANDOFF_TOOL } from '../handoff-tool.js';
import type { BuiltinDecision, BuiltinTurn } from './types.js';

const ARTICLES = String.raw`(?:(?:a|an|the|some|another|one of your|one of the)\s+)?`;
/** "human", but not "human-readable", "human error" or "human resources". */
const HUMAN = String.raw`human(?:\s+being)?s?(?![-\s]+(?:readable|friendly|error|resources?|language|time|format|input))`;
/**
 * Words that only ever mean a person of the support team: enough with any way of asking ("get a
 * human", "is there a representative").
 */
const CLEAR_PERSON = String.raw`${ARTICLES}(?:${HUMAN}|(?:real|actual|live)\s+(?:${HUMAN}|person|people|agent|someone|somebody|operator)|representative|customer\s+(?:service|support|care)(?:\s+(?:agent|team|rep(?:resentative)?|person))?|support\s+(?:team|staff|agent|person|rep(?:resentative)?)|team\s+member|staff\s+member|someone\s+(?:from|in|on)\s+(?:your|the)\s+(?:team|support|staff|company|shop|store))`;
/**
 * Words that name a person but also something else: a user agent, an SQL operator, "the person at
 * the keyboard", "the logged-in person". They count only in a request to talk to them, or on their
 * own at the end of a request ("I need someone.", "agent please").
 */
const ANY_PERSON = String.raw`(?:${CLEAR_PERSON}|${ARTICLES}(?:person|people|agent|rep|operator|someone|somebody|staff|employee|manager|supervisor|man|woman))`;
/** What may follow a person named in a request: the end of the sentence or a polite word. */
const END = String.raw`(?:\s+(?:please|pls|now|asap|right now|here))?\s*(?:[.!?,;]|$)`;

/** What a person of the team is asked to do for the customer. */
const HELP = String.raw`(?:help|assist|call|phone|ring|contact|e-?mail|get back to|look (?:at|into)|check|sort out|deal with|handle)\b`;

/**
 * The usual ways of asking for a person: "talk to a human", "can I speak with someone from support",
 * "connect me to an agent", "I want a real person", "human please", "representative", "not a bot".
 * A question that only mentions a person, a user or a request ("ask the person at the keyboard",
 * "pass an agent to http.request", "is there an operator for arrays") is not one.
 */
const ASKS_FOR_PERSON: RegExp[] = [
  // Talking to someone: "speak with someone", "chat to an agent".
  new RegExp(String.raw`\b(?:talk|speak|chat)(?:ing)?\s+(?:to|with)\s+${ANY_PERSON}\b`, 'i'),
  // Being passed to someone: "connect me to an agent", "transfer this to a human".
  new RegExp(String.raw`\b(?:connect|transfer|escalate|put|pass|hand|forward)(?:ed|ing)?\s+(?:me|us|this|it|my\s+(?:call|case|question|issue|request|ticket))(?:\s+(?:over|through|on))?\s+(?:to|with|through)\s+${ANY_PERSON}\b`, 'i'),
  new RegExp(String.raw`\b(?:connect|transfer|escalate|put|pass|hand|forward)(?:ed|ing)?(?:\s+(?:over|through|on))?\s+(?:to|with|through)\s+${CLEAR_PERSON}\b`, 'i'),
  // Wanting one: "I want a real person", "get me a human", "is there a representative".
  // "have" only as a request ("can I have a human"): "do you have customer service on Sundays?" asks about hours.
  new RegExp(String.raw`\b(?:want|need|like|prefer|get|(?:can|could|may) i have|see|reach|contact|call|is there|are there|give me)\b(?:\s+me)?\s+${CLEAR_PERSON}\b`, 'i'),
  new RegExp(String.raw`\b(?:want|need|like|prefer|get|(?:can|could|may) i have|reach|contact|give)\b(?:\s+me)?\s+${ANY_PERSON}${END}`, 'i'),
  // Someone to help: "I need someone to help me with my order", "is there someone who can look at
  // my account", "can somebody please call me back". A person to do anything else ("I need the
  // logged-in person to confirm") is no request for the team.
  new RegExp(String.raw`\b(?:want|need|like|get|is there|are there)\b(?:\s+me)?\s+${ANY_PERSON}\s+(?:who\s+(?:can|could)\s+|to\s+)${HELP}`, 'i'),
  new RegExp(String.raw`^(?:can|could|would|will)\s+(?:someone|somebody|a person|a human)\s+(?:please\s+)?${HELP}`, 'i'),
  // The person alone: "representative", "agent please", "human!".
  new RegExp(String.raw`^\s*${ANY_PERSON}${END}\s*$`, 'i'),
  // Not wanting the bot: "a person, not a bot", "no more bots".
  /\b(?:not|no more)\s+(?:a\s+|an\s+|the\s+)?(?:bot|robot|machine|ai)s?(?:\s+(?:please|pls))?\s*(?:[.!?,;]|$)/i,
  /\bstop\s+talking\s+to\s+(?:a\s+|the\s+|this\s+)?(?:bot|robot|machine|ai)\b/i,
];

/** True when the text asks for a person rather than for an answer. */
export function asksForPerson(text: string): boolean {
  const said = text.trim();
  if (said.length > 300) return false;
  // "Are you a human?" asks about the assistant; small talk answers it.
  if (/^\s*are you\b/i.test(said)) return false;
  // Clause by clause: "I don't need a person, just tell me the price" asks for none, while "I don't
  // want a bot, I want a human" does in its second clause. "Not a bot" is itself a way of asking.
  return said
    .split(/[,.;!?]+|\s+(?:but|just)\s+/i)
    .some((clause) => clause.trim() !== '' && (!NEGATED.test(clause) || NOT_A_BOT.test(clause)) && ASKS_FOR_PERSON.some((re) => re.test(clause.trim())));
}

/** A clause that says it does not want what follows: "don't need", "no need to", "without". */
const NEGATED = /\b(?:don'?t|do not|doesn'?t|does not|didn'?t|won'?t|will not|never|no need|without)\b/i;
const NOT_A_BOT = /\b(?:not|no more)\s+(?:a\s+|an\s+|the\s+)?(?:bot|robot|machine|ai)s?\b/i;

/**
 * Asking for a person: calls `request_handoff` (when the project offers it) with the user's words
 * as the reason, then, once it ran, says that a person will reply here.
 */
export function handoffSkill(turn: BuiltinTurn): BuiltinDecision | null {
  if (!turn.tools.some((t) => t.name === HANDOFF_TOOL)) return null;
  const done = turn.outcomes.find((o) => o.toolName === HANDOFF_TOOL);
  if (done) {
    return {
      kind: 'answer',
      text: done.isError ? "I'm sorry, I couldn't reach the team just now. Please try again in a moment." : HANDOFF_REPLY,
    };
  }
  if (turn.outcomes.length > 0 || !asksForPerson(turn.question)) return null;
  return { kind: 'call', toolName: HANDOFF_TOOL, input: { reason: clipText(turn.question.trim(), 500) } };
}
