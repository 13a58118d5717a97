import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Config } from '../config.js';
import type { Project } from '../projects/project.js';
import { createBuiltinModel } from './builtin/model.js';

/** Thrown when the configured model cannot be used (a missing key or base URL). */
export class ModelConfigError extends Error {
  override name = 'ModelConfigError';
}

/** The model spec in force for a project: its own `settings.model`, else ANSWERDESK_MODEL. */
export function modelSpecFor(project: Project, config: Config): string {
  return project.settings.model ?? config.ANSWERDESK_MODEL;
}

/**
 * The AI SDK model for a spec: `builtin`, `openai:<model>`, `anthropic:<model>` or
 * `openai-compatible:<model>` (any server speaking the Chat Completions API: Ollama, vLLM, llama.cpp,
 * LM Studio, OpenRouter…). Keys come from the config only. Model objects hold no per-call state and
 * are made once per spec: building one compiles its response schemas, which per request cost about
 * half a megabyte of heap and most of the CPU of a streamed answer. One registry per app, built at
 * boot.
 */
export class ModelRegistry {
  /** The offline model; it holds no state, so one instance serves every answer. */
  readonly builtin: LanguageModelV3 = createBuiltinModel();
  private readonly bySpec = new Map<string, LanguageModelV3>();

  constructor(private readonly config: Config) {}

  resolve(spec: string): LanguageModelV3 {
    if (spec === 'builtin') return this.builtin;
    let model = this.bySpec.get(spec);
    if (!model) this.bySpec.set(spec, (model = createModel(spec, this.config)));
    return model;
  }
}

function createModel(spec: string, config: Config): LanguageModelV3 {
  const colon = spec.indexOf(':');
  const provider = spec.slice(0, colon);
  const modelId = spec.slice(colon + 1);
  if (colon < 0 || !modelId) throw new ModelConfigError(`Unknown model "${spec}"`);
  switch (provider) {
    case 'openai':
      if (!config.OPENAI_API_KEY) throw new ModelConfigError('OPENAI_API_KEY is not set');
      return createOpenAI({ apiKey: config.OPENAI_API_KEY })(modelId);
    case 'anthropic':
      if (!config.ANTHROPIC_API_KEY) throw new ModelConfigError('ANTHROPIC_API_KEY is not set');
      return createAnthropic({ apiKey: config.ANTHROPIC_API_KEY })(modelId);
    case 'openai-compatible':
      if (!config.OPENAI_COMPATIBLE_BASE_URL) throw new ModelConfigError('OPENAI_COMPATIBLE_BASE_URL is not set');
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: config.OPENAI_COMPATIBLE_BASE_URL,
        apiKey: config.OPENAI_COMPATIBLE_API_KEY,
        // Ask for the usage chunk at the end of the stream, so token counts are stored.
        includeUsage: true,
      })(modelId);
    default:
      throw new ModelConfigError(`Unknown model provider "${provider}"`);
  }
}
