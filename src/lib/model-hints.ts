/**
 * AnswerDesk's own namespace in the AI SDK's `providerOptions`: facts the builtin model reads as data
 * (the company's name, an action's example requests) instead of parsing them back out of the
 * prompt text. Every provider reads only its own namespace, so what a real model is sent stays the
 * same.
 */
export const MODEL_HINTS = 'answerdesk';

/**
 * On the model call (`streamText`'s providerOptions): the name the system prompt gives the company,
 * and the names of the skills it lists (what the assistant offers when it cannot answer).
 */
export type CallHints = { projectName: string; skills: string[] };

/** On an action tool (`tool`'s providerOptions): its description and example requests, kept apart. */
export type ToolHints = { description: string; examples: string[] };
