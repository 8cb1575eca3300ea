import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

// The settings of the OpenAI-compatible forms: a mistake stops start-up with a message naming it.

const base = {
  CHAT_API_URL: 'http://127.0.0.1:11434/v1',
  CHAT_API_KEY: 'k',
  CHAT_BOT_ID: 'llama3.2',
  CHAT_API_FORM: 'chat-completions',
  DISCORD_BOT_TOKEN: 'x',
};
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('OpenAI form settings', () => {
  it('defaults: no system prompt, no extra fields, transcripts of 40 turns and 24,000 characters', () => {
    const c = loadConfig(base);
    expect(c.upstream.form).toBe('chat-completions');
    expect(c.upstream.openAi).toEqual({
      systemPrompt: undefined,
      requestExtra: undefined,
      transcript: { maxTurns: 40, maxChars: 24_000 },
    });
    expect(loadConfig({ ...base, CHAT_API_FORM: 'Responses' }).upstream.form).toBe('responses');
  });

  it('CHAT_REQUEST_EXTRA is a JSON object, passed as given', () => {
    const extra = '{"temperature":0.2,"reasoning":{"effort":"low"}}';
    expect(loadConfig({ ...base, CHAT_REQUEST_EXTRA: extra }).upstream.openAi.requestExtra).toEqual({
      temperature: 0.2,
      reasoning: { effort: 'low' },
    });
    expect(problemsOf({ CHAT_REQUEST_EXTRA: '{temperature: 0.2}' })).toEqual([
      expect.stringMatching(/^CHAT_REQUEST_EXTRA: not valid JSON \(.+\); write a JSON object/),
    ]);
    expect(problemsOf({ CHAT_REQUEST_EXTRA: '[1,2]' })).toEqual([
      'CHAT_REQUEST_EXTRA: must be a JSON object, e.g. {"temperature":0.2}',
    ]);
  });

  it('the system prompt: text, or a file read at start-up; not both; a missing file named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prompt-'));
    try {
      const file = join(dir, 'prompt.txt');
      writeFileSync(file, 'You are the support bot.\nBe brief.\n');
      expect(loadConfig({ ...base, CHAT_SYSTEM_PROMPT: 'Be kind.' }).upstream.openAi.systemPrompt).toBe('Be kind.');
      expect(loadConfig({ ...base, CHAT_SYSTEM_PROMPT_FILE: file }).upstream.openAi.systemPrompt).toBe(
        'You are the support bot.\nBe brief.',
      );
      expect(problemsOf({ CHAT_SYSTEM_PROMPT: 'a', CHAT_SYSTEM_PROMPT_FILE: file })).toEqual([
        'CHAT_SYSTEM_PROMPT and CHAT_SYSTEM_PROMPT_FILE are both set: set one of them',
      ]);
      expect(problemsOf({ CHAT_SYSTEM_PROMPT_FILE: join(dir, 'missing.txt') })).toEqual([
        `CHAT_SYSTEM_PROMPT_FILE: cannot read ${join(dir, 'missing.txt')} (ENOENT)`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
