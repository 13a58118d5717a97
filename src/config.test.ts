import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, configSchema, loadConfig } from './config.js';

const run = promisify(execFile);

describe('configuration', () => {
  it('.env.example lists exactly the variables of the config schema, each with its true default', () => {
    const text = readFileSync(resolve(import.meta.dirname, '../.env.example'), 'utf8');
    const entries = [...text.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1], m[2]] as const);
    const names = entries.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(configSchema.shape).sort());
    const defaults = loadConfig({}) as Record<string, unknown>;
    for (const [name, value] of entries) {
      // Each entry is preceded by a comment saying what it is.
      const line = text.split('\n').findIndex((l) => l === `# ${name}=${value}`);
      expect(text.split('\n')[line - 1], name).toMatch(/^# \S/);
      expect(text.split('\n')[line - 1], name).not.toMatch(/^# [A-Z][A-Z0-9_]*=/);
      if (value === '') continue;
      const parsed = loadConfig({ [name]: value }) as Record<string, unknown>;
      // A variable with a default shows that default; one without shows a valid example.
      if (defaults[name] !== undefined) expect(parsed[name], name).toEqual(defaults[name]);
    }
  });

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
    expect(loadConfig({ PORT: '', TRUST_PROXY: '', ANSWERDESK_DEMO: 'no', ANSWERDESK_MODEL: 'openai-compatible:llama3' })).toMatchObject({
      PORT: 3000,
      TRUST_PROXY: false,
      ANSWERDESK_DEMO: false,
      ANSWERDESK_MODEL: 'openai-compatible:llama3',
    });
  });

  it('takes TRUST_PROXY as a hop count or a list of proxy addresses, and refuses a bare "true"', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '0' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8 ,loopback' }).TRUST_PROXY).toEqual(['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'loopback']);
    for (const value of ['true', 'TRUE', 'yes']) {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
        /TRUST_PROXY: must name the trusted proxies: their number \(e\.g\. 1 behind one load balancer\) or their addresses\/CIDRs/,
      );
    }
    for (const value of ['proxy.internal', '10.0.0.0/33', '10.0.0.1;10.0.0.2']) {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY: must be a hop count or a comma-separated list of IP addresses\/CIDRs/);
    }
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
