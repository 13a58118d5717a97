import { HANDOFF_REPLY, HANDOFF_TOOL } from '../handoff-tool.js';
import type { BuiltinDecision, BuiltinTurn } from './types.js';

const PERSON = String.raw`(?:a |an |the |some |real |actual |live |another )*(?:human(?: being)?|person|people|agent|representative|rep|operator|someone|somebody|staff(?: member)?|team member|support (?:team|staff|agent)|customer (?:service|support)(?: agent| team| rep(?:resentative)?)?|employee|man|woman)`;

/**
 * The usual ways of asking for a person: "talk to a human", "can I speak with someone from support",
 * "connect me to an agent", "I want a real person", "human please", "representative".
 */
const ASKS_FOR_PERSON: RegExp[] = [
  new RegExp(String.raw`\b(?:talk|speak|chat|connect|transfer|escalate|put|get|pass|hand|forward)(?:ed|ing)?\b(?: me| this| it| you)?(?: (?:to|with|through))? ${PERSON}\b`, 'i'),
  new RegExp(String.raw`\b(?:want|need|like|prefer|get|have|see|reach|contact)\b(?: to (?:talk|speak|chat) (?:to|with))? ${PERSON}\b`, 'i'),
  new RegExp(String.raw`\b(?:is there|are there|can i get|can i have|give me)\b ${PERSON}\b`, 'i'),
  new RegExp(String.raw`^\s*(?:${PERSON})(?:,? please| pls| now)?[.!?]*\s*$`, 'i'),
  /\b(?:not|no more|stop talking to) (?:a |the |this )?(?:bot|robot|machine|ai)\b/i,
];

/** True when the text asks for a person rather than for an answer. */
export function asksForPerson(text: string): boolean {
  const said = text.trim();
  if (said.length > 300) return false;
  // "Are you a human?" asks about the assistant; small talk answers it.
  if (/^\s*are you\b/i.test(said)) return false;
  return ASKS_FOR_PERSON.some((re) => re.test(said));
}

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
  return { kind: 'call', toolName: HANDOFF_TOOL, input: { reason: turn.question.trim().slice(0, 500) } };
}
