import { z } from 'zod';

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const modelSpec = z
  .string()
  .regex(
    /^(builtin|(openai|anthropic|openai-compatible):.+)$/,
    'must be "builtin", "openai:<model>", "anthropic:<model>" or "openai-compatible:<model>"',
  );

/** Every setting AnswerDesk reads from the environment, with its default. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be "sqlite:<path>" or "postgres://…"')
    .default('sqlite:./data/answerdesk.db'),
  REDIS_URL: z.string().regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL').optional(),
  ANSWERDESK_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  ANSWERDESK_MODEL: modelSpec.default('builtin'),
  /** Embeddings for knowledge search (fused with full text); unset means full text alone. */
  ANSWERDESK_EMBEDDING_MODEL: z
    .string()
    .regex(/^(openai|openai-compatible):.+$/, 'must be "openai:<model>" or "openai-compatible:<model>"')
    .optional(),
  ANSWERDESK_SECRET_KEY: z.string().optional(),
  ANSWERDESK_MODEL_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Longest silence from the model inside one step before the answer fails. */
  ANSWERDESK_MODEL_IDLE_TIMEOUT_MS: z.coerce.number().int().min(500).default(60_000),
  /** A `:` comment is sent on an answer stream after this much silence, so proxies keep it open. */
  ANSWERDESK_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(10).max(300_000).default(15_000),
  ANSWERDESK_DEMO: bool.default(true),
  /** How long a node may keep key → project and a project's skills before reading them again. */
  ANSWERDESK_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  ANSWERDESK_PUBLIC_URL: z.string().url().optional(),
  OPENAI_COMPATIBLE_BASE_URL: z.string().url().optional(),
  OPENAI_COMPATIBLE_API_KEY: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  TRUST_PROXY: bool.default(false),
  ANSWERDESK_ALLOW_PRIVATE_NETWORK: bool.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/**
 * Parses the environment once. Empty strings count as unset, so `FOO= npm start` falls back to the
 * default instead of failing on an empty value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
