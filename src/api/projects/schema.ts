import { z } from 'zod';

export const modelSpecSchema = z
  .string()
  .regex(/^(builtin|(openai|anthropic|openai-compatible):.+)$/, 'Expected builtin, openai:<model>, anthropic:<model> or openai-compatible:<model>')
  .describe('Model for this project; overrides ANSWERDESK_MODEL.');

const color = z.string().min(1).max(64).regex(/^[#(),.%\w\s-]+$/, 'Expected a CSS color');

/** The customisable part of WidgetConfig, as stored in project settings. */
export const widgetSettingsSchema = z
  .object({
    showBranding: z.boolean(),
    position: z.enum(['bottom-right', 'bottom-left']),
    primaryColor: color,
    bgColor: color,
    textColor: color,
    navigationCardColor: color,
    fontFamily: z.string().min(1).max(200).regex(/^[^;{}<>]+$/, 'Expected a CSS font-family list'),
    fabIcon: z.string().max(2048).describe('Icon of the launcher button: a URL, a data: URL or an emoji.'),
    fabText: z.string().max(40).describe('Optional text beside the launcher icon.'),
  })
  .partial()
  .strict();

const rpm = z.number().int().min(1).max(1_000_000);

export const projectSettingsSchema = z
  .object({
    model: modelSpecSchema,
    instructions: z.string().max(20_000).describe('Extra instructions for the agent, added to its system prompt.'),
    widget: widgetSettingsSchema,
    conversationTtlMinutes: z
      .number()
      .int()
      .min(1)
      .max(525_600)
      .describe('Idle minutes after which a conversation counts as closed. Default 1440.'),
    identityVerification: z
      .enum(['optional', 'required'])
      .describe('"required": calls naming an end user must carry x-user-hmac or x-user-token.'),
    allowedOrigins: z
      .array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'Expected an origin such as https://example.com'))
      .max(100)
      .describe('Browser origins allowed to call the runtime API. Empty or absent: any origin.'),
    rateLimits: z
      .object({ chat: rpm, session: rpm, general: rpm })
      .partial()
      .strict()
      .describe('Requests per minute per client address, per bucket.'),
  })
  .partial()
  .strict();

export type ProjectSettings = z.infer<typeof projectSettingsSchema>;
export type WidgetSettings = z.infer<typeof widgetSettingsSchema>;

export const DEFAULT_TTL_MINUTES = 1440;

export const projectSchema = z.object({
  id: z.string(),
  name: z.string(),
  settings: projectSettingsSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Project = z.infer<typeof projectSchema>;

export const apiKeySchema = z.object({
  id: z.string(),
  projectId: z.string(),
  kind: z.enum(['public', 'secret']),
  name: z.string().nullable(),
  prefix: z.string().describe('Start and end of the key, for telling keys apart; the key itself is shown once.'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

export const createProjectBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    settings: projectSettingsSchema.optional(),
  })
  .strict();

export const patchProjectBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    settings: projectSettingsSchema.optional(),
  })
  .strict();

export const createKeyBody = z
  .object({
    kind: z.enum(['public', 'secret']).default('public'),
    name: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

export const projectIdParams = z.object({ projectId: z.string().min(1).max(64) });
