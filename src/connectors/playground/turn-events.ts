import type { AgentFile, AgentSource, AgentStep } from '../../core/chat-port.js';

// What the page learns about a turn besides its reply's writes: that the bridge works on it and
// when it ended (the page's typing indicator and its Stop before the first word arrives), and the
// assistant's work beside the answer (issue 36: steps while they run, the sources it cites, the
// files it made). Sent on the conversation's event stream as `event: turn|step|sources|file`,
// next to `event: reply` (streams.ts). A turn is named by the eventId `send` returned; its reply's
// messages are `<eventId>.<part>`.

/** A file as the page gets it: an https link or the bytes as a data URL (a download), or only its name. */
export interface PageFile {
  name: string;
  mime?: string;
  size?: number;
  url?: string;
  dataUrl?: string;
}

export type TurnEvent =
  | { kind: 'turn'; eventId: string; state: 'working' | 'done'; result?: string }
  | { kind: 'step'; eventId: string; steps: AgentStep[] }
  | { kind: 'sources'; eventId: string; sources: AgentSource[] }
  | { kind: 'file'; eventId: string; file: PageFile };

export type TurnListener = (event: TurnEvent) => void;

/** Only an https URL is passed on (as the platforms show only those); bytes become a data URL. */
export function pageFile(f: AgentFile): PageFile {
  const out: PageFile = { name: f.name };
  if (f.mime !== undefined) out.mime = f.mime;
  if (f.size !== undefined) out.size = f.size;
  if (f.url !== undefined && /^https:\/\//i.test(f.url)) out.url = f.url;
  else if (f.data !== undefined) {
    const mime = f.mime !== undefined && /^[\w.+-]+\/[\w.+-]+$/.test(f.mime) ? f.mime : 'application/octet-stream';
    out.dataUrl = `data:${mime};base64,${Buffer.from(f.data).toString('base64')}`;
  }
  return out;
}

/** Pages following a conversation's turns (one set per conversation, dropped when empty). */
export class TurnEvents {
  private readonly byConversation = new Map<string, Set<TurnListener>>();

  constructor(private readonly onListenerError: (err: unknown) => void) {}

  subscribe(conversation: string, listener: TurnListener): () => void {
    let set = this.byConversation.get(conversation);
    if (set === undefined) this.byConversation.set(conversation, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byConversation.get(conversation) === set) this.byConversation.delete(conversation);
    };
  }

  emit(conversation: string, event: TurnEvent): void {
    for (const l of [...(this.byConversation.get(conversation) ?? [])]) {
      try {
        l(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
