import type { AgentFile, AgentStep } from '../../core/ports.js';
import { DISCORD_MAX_CHARS } from './plain-fallback.js';

// An agent's work on Discord: the running step as a small `-#` subtext line under the reply's
// text while it streams (edited in place with the text, gone on the final write), and images by
// URL as embed images on the reply's last message. Sources need nothing here: the core lists them
// as `[title](<url>)`, which Discord shows as links without previews.

/** Embeds one message carries at most (Discord's limit). */
const MAX_EMBEDS = 10;
/** A step line's title at most this long (the core already bounds titles). */
const MAX_LINE_TITLE = 100;

/** The step line under the text: the running step; with no text yet, the newest step even when done. */
export function stepLine(steps: readonly AgentStep[] | undefined, hasText: boolean): string {
  if (steps === undefined || steps.length === 0) return '';
  const running = [...steps].reverse().find((s) => s.state === 'running');
  const step = running ?? (hasText ? undefined : steps[steps.length - 1]);
  if (step === undefined) return '';
  const title = step.title.slice(0, MAX_LINE_TITLE);
  if (step.state === 'running') return `-# ${title}…`;
  return `-# ${step.state === 'failed' ? '✗' : '✓'} ${title}`;
}

/** The message's content with its step line, when the line fits in the message. */
export function withStepLine(text: string, steps: readonly AgentStep[] | undefined): string {
  const line = stepLine(steps, text.trim() !== '');
  if (line === '') return text;
  const content = text.trim() === '' ? line : `${text}\n${line}`;
  return content.length <= DISCORD_MAX_CHARS ? content : text;
}

/** The sink shows an image with an https URL itself, as an embed image. */
export function showsImage(file: AgentFile): boolean {
  return file.url !== undefined && file.url.startsWith('https://') && (file.mime ?? '').startsWith('image/');
}

/** The embeds of a reply's last write: one embed image per image it shows. */
export function imageEmbeds(files: readonly AgentFile[] | undefined): unknown[] | undefined {
  const images = (files ?? []).filter(showsImage).slice(0, MAX_EMBEDS);
  if (images.length === 0) return undefined;
  return images.map((f) => ({ image: { url: f.url }, ...(f.name !== '' ? { title: f.name.slice(0, 256) } : {}) }));
}
