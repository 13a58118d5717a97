/**
 * Rough token count of a text (about four characters per token for English, the usual rule of
 * thumb). Used for the history budget and for the builtin model's usage figures, where an exact
 * tokenizer would cost more than it is worth.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
