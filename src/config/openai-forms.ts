import { readFileSync } from 'node:fs';
import type { RawEnv } from './env-schema.js';

// The settings only the OpenAI-compatible upstream forms read (CHAT_API_FORM=chat-completions or
// responses, issue 40): the system prompt (text or a file) and the extra request fields, a JSON
// object merged into every request body as given. A mistake in either stops start-up by name.

export interface OpenAiFormSettings {
  /** CHAT_SYSTEM_PROMPT or the text of CHAT_SYSTEM_PROMPT_FILE; undefined: none sent. */
  systemPrompt: string | undefined;
  /** CHAT_REQUEST_EXTRA: fields added to every request body (temperature, reasoning, tools…). */
  requestExtra: Record<string, unknown> | undefined;
  /** CHAT_TRANSCRIPT_MAX_TURNS / CHAT_TRANSCRIPT_MAX_CHARS: what a stored transcript keeps. */
  transcript: { maxTurns: number; maxChars: number };
}

export function openAiFormSettings(raw: RawEnv, problems: string[]): OpenAiFormSettings {
  return {
    systemPrompt: systemPromptOf(raw, problems),
    requestExtra: requestExtraOf(raw.CHAT_REQUEST_EXTRA, problems),
    transcript: { maxTurns: raw.CHAT_TRANSCRIPT_MAX_TURNS, maxChars: raw.CHAT_TRANSCRIPT_MAX_CHARS },
  };
}

function systemPromptOf(raw: RawEnv, problems: string[]): string | undefined {
  const text = raw.CHAT_SYSTEM_PROMPT;
  const file = raw.CHAT_SYSTEM_PROMPT_FILE;
  if (text !== undefined && file !== undefined) {
    problems.push('CHAT_SYSTEM_PROMPT and CHAT_SYSTEM_PROMPT_FILE are both set: set one of them');
    return undefined;
  }
  if (file === undefined) return text;
  try {
    const read = readFileSync(file, 'utf8').trim();
    return read === '' ? undefined : read;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    problems.push(`CHAT_SYSTEM_PROMPT_FILE: cannot read ${file} (${typeof code === 'string' ? code : String(err)})`);
    return undefined;
  }
}

function requestExtraOf(text: string | undefined, problems: string[]): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    problems.push(`CHAT_REQUEST_EXTRA: not valid JSON (${why}); write a JSON object, e.g. {"temperature":0.2}`);
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push('CHAT_REQUEST_EXTRA: must be a JSON object, e.g. {"temperature":0.2}');
    return undefined;
  }
  return value as Record<string, unknown>;
}
