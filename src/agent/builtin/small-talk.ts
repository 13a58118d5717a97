import { KNOWLEDGE_TOOL } from '../../knowledge/tool.js';
import { HANDOFF_TOOL } from '../handoff-tool.js';
import { isActionTool } from './actions.js';
import { humanize } from './text.js';
import type { BuiltinDecision, BuiltinTurn } from './types.js';

const GREETING = /^(hi|hello|hey|hiya|howdy|yo|good (morning|afternoon|evening|day)|greetings|hallo|bonjour|hola)( there| all| team| everyone)?$/;
const THANKS = /^(thanks?( you)?( so much| a lot| very much)?|thx|ty|cheers|much appreciated|great,? thanks?( you)?|perfect,? thanks?( you)?)$/;
const BYE = /^(bye|goodbye|good bye|see you( later)?|see ya|that'?s all|nothing else|no,? that'?s (it|all)|have a (good|nice) (day|one))$/;
const HOW_ARE_YOU = /^(how are you( doing| today)?|how'?s it going|how do you do|what'?s up|sup)$/;
const WHO = /^(who are you|what are you|are you (a |an )?(bot|robot|human|person|real|ai|machine)|what'?s your name|who am i (talking|speaking) (to|with))$/;
const ABILITIES = /^(help|what can you do|what do you do|how can you help( me)?|what can i ask( you)?|what can you help (me )?with)$/;
const ACK = /^(ok|okay|k|cool|great|nice|awesome|got it|i see|alright|sounds good|perfect|understood)$/;

/**
 * Greetings, thanks, goodbyes and questions about the assistant itself, answered without a tool.
 * Only a message that is nothing but small talk matches: "hi, where is my order?" is a question.
 */
export function smallTalkSkill(turn: BuiltinTurn): BuiltinDecision | null {
  if (turn.outcomes.length > 0) return null;
  const said = normalize(turn.question);
  const name = turn.projectName;
  const me = name ? `the ${name} assistant` : 'a support assistant';
  const offer = capabilities(turn);

  if (GREETING.test(said)) return answer(`Hi! I'm ${me}. ${offer} What can I do for you?`);
  if (HOW_ARE_YOU.test(said)) return answer("I'm doing well, thanks for asking. What can I help you with today?");
  if (THANKS.test(said)) return answer("You're welcome! Is there anything else I can help with?");
  if (BYE.test(said)) return answer('Goodbye, and thanks for reaching out. Come back any time.');
  if (WHO.test(said)) return answer(`I'm ${me}: an automated assistant, not a person. ${offer}`);
  if (ABILITIES.test(said)) return answer(offer);
  if (ACK.test(said)) return answer('Glad that helps. Anything else?');
  return null;
}

function answer(text: string): BuiltinDecision {
  return { kind: 'answer', text };
}

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’]/g, "'")
    .replace(/[!?.,;:)(]+/g, ' ')
    .replace(/[\p{Extended_Pictographic}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What this assistant can do here, from the tools it was offered. */
export function capabilities(turn: BuiltinTurn): string {
  const knowledge = turn.tools.some((t) => t.name === KNOWLEDGE_TOOL);
  const actions = turn.tools.filter((t) => isActionTool(t.name)).map((t) => humanize(t.name));
  // The person is offered in plain words: "request handoff" is a tool's name, not something to do.
  const person = turn.tools.some((t) => t.name === HANDOFF_TOOL);
  const parts: string[] = [];
  if (knowledge) parts.push('answer questions from our help articles');
  if (actions.length > 0) {
    const shown = actions.slice(0, 3);
    parts.push(`take care of a few things for you (such as ${shown.join(', ')}${actions.length > 3 ? ', and more' : ''})`);
  }
  if (parts.length === 0) {
    return person
      ? "I can chat with you and put you in touch with a person from the team, but I don't have help articles or tools to look things up yet."
      : "I can chat with you, but I don't have help articles or tools to look things up yet.";
  }
  const said = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  return person ? `I can ${said}, or put you in touch with a person from the team.` : `I can ${said}.`;
}
