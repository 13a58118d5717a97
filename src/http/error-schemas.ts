import { z } from 'zod';

/**
 * The error bodies every route shares, named so the OpenAPI document lists them once under
 * `components.schemas` (and generated clients get `Error` and `ValidationError` types).
 */
export const errorSchema = z
  .object({ error: z.string().describe('What went wrong, e.g. "Conversation not found".') })
  .meta({ id: 'Error', description: 'Every error body: `{"error": "…"}`.' });

export const errorDetailSchema = z
  .object({
    path: z.string().describe('Where, in dot notation relative to the body or query (`messages.0.content`); empty for the whole body.'),
    message: z.string(),
  })
  .meta({ id: 'ErrorDetail', description: 'One invalid field.' });

export const validationErrorSchema = z
  .object({
    error: z.literal('Validation error'),
    details: z.array(errorDetailSchema).describe('One item per invalid field.'),
  })
  .meta({ id: 'ValidationError', description: 'A body, query or path parameter that does not match the schema, or a body that is not JSON.' });
