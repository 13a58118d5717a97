import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { ProjectsTable } from '../store/schema.js';

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
    starterQuestions: z
      .array(z.string().trim().min(1).max(120))
      .max(6)
      .describe('Questions offered as buttons on the home screen; none by default.'),
  })
  .partial()
  .strict()
  .meta({ id: 'WidgetSettings', description: 'The customisable fields of WidgetConfig; each overrides the default.' });

const rpm = z.number().int().min(1).max(1_000_000);

export const handoffSettingsSchema = z
  .object({
    enabled: z
      .boolean()
      .describe('Whether end users and the agent can ask for a person (default true). Off: no widget button, no request_handoff tool; teammates can still take over.'),
    afterDeclined: z
      .number()
      .int()
      .min(1)
      .max(20)
      .nullable()
      .describe('Hand off after this many declined answers in a row (the agent searched and found nothing to answer with); null or absent: never.'),
    onNegativeFeedback: z.boolean().describe('Hand off when the end user rates an answer NEGATIVE (default false).'),
    officeHoursText: z
      .string()
      .max(500)
      .nullable()
      .describe('Shown in the widget while waiting for a person, e.g. "We reply Mon–Fri, 9:00–17:00 CET."'),
  })
  .partial()
  .strict()
  .meta({ id: 'HandoffSettings', description: 'When and how a conversation is handed to a person.' });

const settingsShape = {
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
  handoff: handoffSettingsSchema,
};

export const projectSettingsSchema = z
  .object(settingsShape)
  .partial()
  .strict()
  .meta({ id: 'ProjectSettings', description: 'Project settings; every field is optional.' });

/**
 * A change to a project's settings: the keys given replace or merge into the stored ones, and a key
 * set to null is removed, so that its default applies again (an empty Model field means "the
 * server's default", which leaving the key out cannot say).
 */
export const projectSettingsPatchSchema = z
  .object({
    model: settingsShape.model.nullable(),
    instructions: settingsShape.instructions.nullable(),
    widget: settingsShape.widget.nullable(),
    conversationTtlMinutes: settingsShape.conversationTtlMinutes.nullable(),
    identityVerification: settingsShape.identityVerification.nullable(),
    allowedOrigins: settingsShape.allowedOrigins.nullable(),
    rateLimits: settingsShape.rateLimits.nullable(),
    handoff: settingsShape.handoff.nullable(),
  } satisfies { [K in keyof typeof settingsShape]: z.ZodNullable<(typeof settingsShape)[K]> })
  .partial()
  .strict()
  .meta({
    id: 'ProjectSettingsChange',
    description: 'Settings to change: a key given replaces the stored one (`widget`, `rateLimits` and `handoff` merge their fields); null removes it, back to its default.',
  });

export type ProjectSettings = z.infer<typeof projectSettingsSchema>;
export type ProjectSettingsChange = z.infer<typeof projectSettingsPatchSchema>;
export type WidgetSettings = z.infer<typeof widgetSettingsSchema>;

/** Idle minutes after which a conversation counts as closed, when the project does not say. */
export const DEFAULT_TTL_MINUTES = 1440;

/** A project as the app works with it: its row, settings parsed. */
export interface Project {
  id: string;
  name: string;
  settings: ProjectSettings;
  createdAt: string;
  updatedAt: string;
}

export function toProject(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    name: row.name,
    settings: parseSettings(row.settings),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Stored settings are validated on write; a row edited by hand falls back to defaults, never crashes. */
function parseSettings(json: string): ProjectSettings {
  const parsed = projectSettingsSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : {};
}
