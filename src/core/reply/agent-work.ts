import type { AgentFile, AgentSource, AgentStep } from '../chat-port.js';

// An agent's work beside its answer, as one reply collects it from the upstream's stream: the
// steps it runs (shown while they run, SHOW_STEPS), the sources it cites and the files it makes
// (after the answer, SHOW_SOURCES for sources). Bounded: an upstream that sends thousands of
// steps or sources costs a few dozen entries, and nothing of it is ever answer text.

/** Steps kept per reply: the newest replace the oldest finished ones beyond it. */
export const MAX_STEPS = 20;
/** Sources listed after one answer. */
export const MAX_SOURCES = 10;
/** Files and images carried by one reply. */
export const MAX_FILES = 5;
/** Characters of a step's or a source's title shown (an upstream's title can be anything). */
export const MAX_TITLE_CHARS = 80;

export interface AgentWorkSettings {
  /** SHOW_STEPS: collect steps (off: step events are dropped). */
  steps: boolean;
  /** SHOW_SOURCES: collect sources (off: source events are dropped). */
  sources: boolean;
}

export class AgentWork {
  private readonly stepList: AgentStep[] = [];
  private readonly sourceList: AgentSource[] = [];
  private readonly fileList: AgentFile[] = [];
  /** Bumped by every change of the steps a user sees (ReplyWriter compares it with what it showed). */
  version = 0;
  private listener: (() => void) | undefined;

  constructor(readonly settings: AgentWorkSettings) {}

  /** Called after every change of the steps (the writer schedules a write of them). */
  onSteps(listener: () => void): void {
    this.listener = listener;
  }

  get steps(): readonly AgentStep[] {
    return this.stepList;
  }

  get sources(): readonly AgentSource[] {
    return this.sourceList;
  }

  get files(): readonly AgentFile[] {
    return this.fileList;
  }

  /** The step running now (the newest one that runs), for a one-line status. */
  running(): AgentStep | undefined {
    for (let i = this.stepList.length - 1; i >= 0; i--) {
      const s = this.stepList[i];
      if (s?.state === 'running') return s;
    }
    return undefined;
  }

  step(step: AgentStep): void {
    if (!this.settings.steps) return;
    const title = cleanTitle(step.title);
    const at = this.stepList.findIndex((s) => s.id === step.id);
    const known = at >= 0 ? this.stepList[at] : undefined;
    // An update may come without a title (a tool's end): the title it started with stays.
    const next: AgentStep = { id: step.id, title: title !== '' ? title : (known?.title ?? ''), state: step.state };
    if (next.title === '') return;
    if (known !== undefined) {
      if (known.title === next.title && known.state === next.state) return;
      this.stepList[at] = next;
    } else {
      if (this.stepList.length >= MAX_STEPS) {
        // Forget the oldest finished step; when every kept step still runs, the new one is dropped.
        const old = this.stepList.findIndex((s) => s.state !== 'running');
        if (old < 0) return;
        this.stepList.splice(old, 1);
      }
      this.stepList.push(next);
    }
    this.version++;
    this.listener?.();
  }

  /** The reply ended: steps still running are done (the upstream said nothing more of them). */
  finishSteps(): void {
    for (const [i, s] of this.stepList.entries()) if (s.state === 'running') this.stepList[i] = { ...s, state: 'done' };
  }

  source(source: AgentSource): void {
    if (!this.settings.sources || this.sourceList.length >= MAX_SOURCES) return;
    const url = safeUrl(source.url);
    if (url === undefined || this.sourceList.some((s) => s.url === url)) return;
    const title = cleanTitle(source.title ?? '');
    this.sourceList.push(title !== '' ? { url, title } : { url });
  }

  file(file: AgentFile): void {
    if (this.fileList.length >= MAX_FILES) return;
    const name = cleanTitle(file.name) || 'file';
    const url = file.url !== undefined ? safeUrl(file.url, true) : undefined;
    const { data, mime, size } = file;
    this.fileList.push({
      name,
      ...(mime !== undefined ? { mime } : {}),
      ...(size !== undefined ? { size } : {}),
      ...(url !== undefined ? { url } : {}),
      ...(data !== undefined && url === undefined ? { data } : {}),
    });
  }
}

/** One line, no Markdown link brackets, at most MAX_TITLE_CHARS. */
export function cleanTitle(title: string): string {
  const one = title
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[[\]<>`|]/g, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return one.length > MAX_TITLE_CHARS ? `${one.slice(0, MAX_TITLE_CHARS - 1).trimEnd()}…` : one;
}

/**
 * A URL a link may carry: http(s) only (https only for what a platform fetches itself, `httpsOnly`),
 * without the characters that would end a Markdown link or an angle-bracket destination early.
 */
export function safeUrl(raw: string, httpsOnly = false): string | undefined {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && (httpsOnly || u.protocol !== 'http:')) return undefined;
  // URL serialisation percent-encodes spaces and angle brackets; parentheses are kept, and harmless
  // inside `<…>`.
  const href = u.href;
  return href.length > 1000 || /[\s<>]/.test(href) ? undefined : href;
}

/** What a source is called in the list: its title, else its host. */
export function sourceLabel(s: AgentSource): string {
  if (s.title !== undefined && s.title !== '') return s.title;
  try {
    return new URL(s.url).host;
  } catch {
    return s.url;
  }
}

export const isImage = (f: AgentFile): boolean =>
  f.mime !== undefined
    ? f.mime.startsWith('image/')
    : f.url !== undefined && /\.(png|jpe?g|gif|webp)(\?|#|$)/i.test(new URL(f.url).pathname);

/**
 * What follows the answer, in Markdown every sink renders: the sources as a numbered list of
 * links whose destinations are in angle brackets (CommonMark; Discord then shows no preview), and
 * each file the sink does not show itself as a line naming it (a link when it has a URL).
 */
export function agentAppendix(work: AgentWork, shownBySink: (f: AgentFile) => boolean): string {
  const parts: string[] = [];
  if (work.sources.length > 0) {
    const lines = work.sources.map((s, i) => `${i + 1}. [${sourceLabel(s)}](<${s.url}>)`);
    parts.push(`**Sources**\n${lines.join('\n')}`);
  }
  const named = work.files.filter((f) => !shownBySink(f));
  if (named.length > 0) parts.push(named.map(fileLine).join('\n'));
  return parts.length > 0 ? `\n\n${parts.join('\n\n')}` : '';
}

/** A file the reply could not show: its name, linked when it has a URL, and its size when known. */
export function fileLine(f: AgentFile): string {
  const size = f.size !== undefined ? ` (${humanSize(f.size)})` : '';
  return f.url !== undefined ? `📎 [${f.name}](<${f.url}>)${size}` : `📎 ${f.name}${size} (not attached)`;
}

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
