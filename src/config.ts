import { existsSync } from 'node:fs';
import proxyAddr from '@fastify/proxy-addr';
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

/**
 * Which hops in front of the server may set `X-Forwarded-For`: off, the number of proxies, or their
 * addresses. A bare `true` would take the address from whatever the client wrote, so it is refused.
 */
const trustProxy = z.string().transform((value, ctx): false | number | string[] => {
  const text = value.trim().toLowerCase();
  if (['false', 'no', '0'].includes(text)) return false;
  if (/^\d+$/.test(text)) return Number(text);
  if (['true', 'yes'].includes(text)) {
    ctx.addIssue({
      code: 'custom',
      message:
        'must name the trusted proxies: their number (e.g. 1 behind one load balancer) or their addresses/CIDRs (e.g. 10.0.0.0/8,127.0.0.1); "true" would trust any client\'s X-Forwarded-For',
    });
    return z.NEVER;
  }
  const list = text.split(',').map((entry) => entry.trim()).filter(Boolean);
  try {
    proxyAddr.compile(list);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `must be a hop count or a comma-separated list of IP addresses/CIDRs (${(err as Error).message})` });
    return z.NEVER;
  }
  return list;
});

/** Every setting AnswerDesk reads from the environment, with its default. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be "sqlite:<path>" or "postgres://…"')
    .default('sqlite:./data/answerdesk.db'),
  /** PostgreSQL: longest wait for a connection, new or from a full pool, before the request fails with 503. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** PostgreSQL: statement_timeout; the client gives up on a silent connection a second later. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  /** SQLite: how long a write waits for another process's lock (the event loop waits with it). */
  SQLITE_BUSY_TIMEOUT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  REDIS_URL: z.string().regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL').optional(),
  /** Redis: longest wait for a connection to be established. */
  REDIS_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** Redis: longest wait for a command's reply before the rate limit is counted in memory instead. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
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
  /** Answers one node runs at once; unset: sized from the heap (see agent/in-flight.ts). */
  ANSWERDESK_MAX_ANSWERS: z.coerce.number().int().min(1).optional(),
  /** Answers one project may run at once on one node; unset: half the node's cap. */
  ANSWERDESK_MAX_ANSWERS_PER_PROJECT: z.coerce.number().int().min(1).optional(),
  /** On SIGTERM/SIGINT, how long open answers may run before they are stopped and stored as failed. */
  ANSWERDESK_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(25_000),
  ANSWERDESK_DEMO: bool.default(true),
  /** How long a node may keep key → project and a project's skills before reading them again. */
  ANSWERDESK_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  ANSWERDESK_PUBLIC_URL: z.string().url().optional(),
  OPENAI_COMPATIBLE_BASE_URL: z.string().url().optional(),
  OPENAI_COMPATIBLE_API_KEY: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  TRUST_PROXY: trustProxy.default(false),
  ANSWERDESK_ALLOW_PRIVATE_NETWORK: bool.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** JSON lines for log collectors, pino-pretty lines for people; auto: pretty when stdout is a terminal. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Turns on GET /metrics (Prometheus text), readable only with `Authorization: Bearer <this token>`. */
  ANSWERDESK_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Also serves /metrics (same token) on this port of its own, e.g. one reachable from the monitoring network only. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** OpenTelemetry: the OTLP/HTTP collector (`http://collector:4318`); traces go to `<it>/v1/traces`. Unset: no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** OpenTelemetry: the `service.name` of this node's spans. */
  OTEL_SERVICE_NAME: z.string().min(1).default('answerdesk'),
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
  if (parsed.data.METRICS_PORT !== undefined && parsed.data.ANSWERDESK_METRICS_TOKEN === undefined) {
    throw new ConfigError('Invalid configuration:\n  METRICS_PORT: needs ANSWERDESK_METRICS_TOKEN (metrics are only served with a token)');
  }
  return parsed.data;
}

/**
 * Reads `./.env` into the environment when there is one (`.env.example` lists every variable);
 * variables already set win. Called once by the command-line entry, before {@link loadConfig}.
 */
export function loadDotEnv(path = '.env'): boolean {
  if (!existsSync(path)) return false;
  process.loadEnvFile(path);
  return true;
}
