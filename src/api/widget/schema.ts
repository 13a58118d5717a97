import { z } from 'zod';
import type { WidgetSettings } from '../../projects/project.js';

export const skillSummary = z
  .object({ id: z.string().describe('`skill_…`'), name: z.string(), description: z.string() })
  .meta({ id: 'Skill', description: 'A workflow the agent offers (an enabled skill of the project).' });

export const widgetConfigSchema = z
  .object({
    showBranding: z.boolean(),
    position: z.enum(['bottom-right', 'bottom-left']),
    primaryColor: z.string().describe('CSS color of the launcher, header and user bubbles.'),
    bgColor: z.string().describe('CSS color of the chat panel background.'),
    textColor: z.string().describe('CSS color of the panel text.'),
    navigationCardColor: z.string().describe('CSS color of cards (sources, skills) in the panel.'),
    fontFamily: z.string().describe('CSS font-family list.'),
    fabIcon: z.string().describe('Icon of the launcher button: a URL, a data: URL or an emoji.'),
    fabText: z.string().describe('Text beside the launcher icon; empty for an icon-only button.'),
    availableSkills: z.array(skillSummary).describe('Enabled skills of the project, oldest first.'),
    starterQuestions: z.array(z.string()).describe('Questions the home screen offers as buttons; empty for none.'),
    handoff: z
      .object({
        enabled: z.boolean().describe('Whether the widget offers "Talk to a person".'),
        officeHoursText: z.string().nullable().describe('Shown while the visitor waits for a person.'),
      })
      .describe("The project's handoff settings as the widget needs them."),
  })
  .meta({ id: 'WidgetConfig', description: "The widget's look and the project's enabled skills." });
export type WidgetConfig = z.infer<typeof widgetConfigSchema>;

/**
 * A speech bubble, white on the primary colour; inline so the widget needs no extra request. Only the
 * characters a data: URL cannot carry as they are get escaped, which keeps it short and readable.
 */
const CHAT_BUBBLE_SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24' fill='none' stroke='white' stroke-width='2' " +
  "stroke-linecap='round' stroke-linejoin='round'><path d='M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z'/></svg>";
const svgDataUrl = (svg: string) =>
  `data:image/svg+xml,${svg.replace(/[<>#%"]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;

/** What a project that customised nothing gets; `settings.widget` overrides field by field. */
export const WIDGET_DEFAULTS: Required<WidgetSettings> = {
  showBranding: true,
  position: 'bottom-right',
  primaryColor: '#2563eb',
  bgColor: '#ffffff',
  textColor: '#111827',
  navigationCardColor: '#f3f4f6',
  fontFamily:
    'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif',
  fabIcon: svgDataUrl(CHAT_BUBBLE_SVG),
  fabText: '',
  starterQuestions: [],
};
