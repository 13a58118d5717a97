import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const run = promisify(execFile);

describe('configuration', () => {
  it('has working defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite:./data/answerdesk.db',
      ANSWERDESK_MODEL: 'builtin',
      TRUST_PROXY: false,
      ANSWERDESK_ALLOW_PRIVATE_NETWORK: false,
      LOG_LEVEL: 'info',
    });
  });

  it('treats empty values as unset and parses booleans and numbers', () => {
    expect(loadConfig({ PORT: '', TRUST_PROXY: 'true', ANSWERDESK_MODEL: 'openai-compatible:llama3' })).toMatchObject({
      PORT: 3000,
      TRUST_PROXY: true,
      ANSWERDESK_MODEL: 'openai-compatible:llama3',
    });
  });

  it('names every bad value in one readable message', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', ANSWERDESK_MODEL: 'gpt' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', ANSWERDESK_MODEL: 'gpt' });
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toMatch(/^Invalid configuration:/);
      expect(message).toMatch(/PORT:/);
      expect(message).toMatch(/DATABASE_URL: must be "sqlite:<path>" or "postgres:\/\/…"/);
      expect(message).toMatch(/ANSWERDESK_MODEL:/);
    }
  });

  it('stops the server start with that message and a non-zero exit', async () => {
    const err = await run('node', ['bin/answerdesk.js', 'serve'], {
      env: { ...process.env, PORT: '-1', LOG_LEVEL: 'loud' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toMatch(/Invalid configuration:[\s\S]*PORT[\s\S]*LOG_LEVEL/);
  });
});
