import type { FastifyBaseLogger } from 'fastify';
import { newId } from '../lib/ids.js';
import type { Project } from '../projects/project.js';
import { startAnswer, type FinishedAnswer } from './answer.js';
import { knowledgePart, type AgentDeps } from './tools.js';

/**
 * Answers one question the way the agent answers a new conversation (same model, system prompt,
 * skills, knowledge tool and citation rules) without a conversation: nothing is stored. Actions are
 * not offered: a test run must not call endpoints that may change things (cancel an order, issue a
 * refund). Used by eval runs.
 */
export async function answerOnce(deps: AgentDeps, project: Project, question: string, log: FastifyBaseLogger): Promise<FinishedAnswer> {
  let kept: FinishedAnswer | undefined;
  const stream = await startAnswer({
    deps,
    project,
    conversation: { id: `eval_${newId('msg').slice(4)}`, project_id: project.id },
    endUser: null,
    verifiedUser: null,
    userTokens: {},
    assistantMessageId: newId('msg'),
    log,
    factories: [knowledgePart],
    transcript: { history: [{ role: 'user', content: question }], keep: (answer) => void (kept = answer) },
  });
  // Reading the stream to its end runs the answer to its end.
  const reader = stream.getReader();
  while (!(await reader.read()).done);
  if (!kept) throw new Error('The answer ended without a result');
  return kept;
}
