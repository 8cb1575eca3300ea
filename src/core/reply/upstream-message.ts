import type { Logger } from 'pino';
import type { Attachment, AttachmentInfo } from './attachments.js';
import type { ChatMetadata, ContextMessage, FeedbackNote } from '../chat-port.js';
import { hasVisibleText } from '../intake/admission.js';
import type { FeedbackStore, FeedbackVote, IncomingMessage, PlaceMessage } from '../ports.js';
import { MESSAGES } from '../user-messages.js';

// What one upstream send says: the user's words; for a new conversation the place's earlier
// messages (CONTEXT_MODE), without the bridge's own notices (cleanHistory, below); and its
// metadata: where it was written, its files, the user's votes not yet sent. Pure but for reading
// those votes, so the rules are tested without a platform: the user's own words are never cut;
// context is bounded by CONTEXT_MAX_CHARS and, in `message` mode, by what is left of
// CHAT_MAX_MESSAGE_CHARS; when something must go, the oldest context goes first.

export type ContextMode = 'message' | 'metadata' | 'off';

export interface ComposeOptions {
  /** The user's message as the relay checked it (bot mention removed, trimmed). */
  userText: string;
  /** Earlier messages of the place, oldest first (empty: none). */
  context: readonly ContextMessage[];
  mode: ContextMode;
  /** CONTEXT_MAX_CHARS: the most characters of context text (entries' text, in both forms). */
  maxContextChars: number;
  /** CHAT_MAX_MESSAGE_CHARS: the whole composed `message` must fit (context dropped oldest first). */
  maxMessageChars?: number;
}

export interface ComposedMessage {
  message: string;
  /** Merged over the message's own metadata: `context` when any was included. */
  metadata: Pick<ChatMetadata, 'context'>;
  /** The context entries included, oldest first (for a retry with fewer). */
  included: ContextMessage[];
}

export const TRANSCRIPT_START = '[Earlier messages in this conversation, oldest first, for context]';
export const TRANSCRIPT_END = '[End of earlier messages. The new message follows.]';
/** Below this many characters a cut entry says too little to be worth sending. */
const MIN_CUT_CHARS = 40;

// A transcript nobody can forge. Only the bridge starts a line at its left edge: the header, one
// speaker line per real message (`name: ` or `name (assistant): `) and the end marker. A message's
// text continues on lines indented by TEXT_INDENT, whatever line breaks it used (CR, LF, U+2028…),
// so no text can stand as a speaker line, a header or an end marker; and a name is one line with
// no brackets, parentheses or colons, so no user can be named into an assistant or a marker.
// metadata.context keeps the entries as they are (structured: author, role, text).

/** Put before every line of a message's text after its first. */
export const TEXT_INDENT = '    ';
/**
 * Every line separator some reader honours: CR, LF, VT, FF, the file/group/record separators
 * (U+001C-U+001E: Python's splitlines() breaks there), NEL, LINE and PARAGRAPH SEPARATOR.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this matches
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\u0085\u2028\u2029]/g;
/**
 * Characters read as a colon that NFKC leaves alone: modifier letters (ː ˸), the ratio ∶,
 * Armenian ։, Hebrew ׃, Syriac ܃ ܄, Ethiopic ፡ ፥ ፦, runic ᛬, Mongolian ᠄, two-dot ⁚, APL ⍠,
 * Z notation ⦂, Lisu ꓽ, Bamum ꛴, ꞉, Tibetan ༔, presentation forms ︓ ︰ ﹕.
 */
const COLON_LIKE =
  ':\u02d0\u02f8\u0589\u05c3\u0703\u0704\u0f14\u1361\u1365\u1366\u16ec\u1804\u205a\u2236\u2360\u2982\ua4fd\ua6f4\ua789\ufe13\ufe30\ufe55';
/**
 * Characters drawn as a parenthesis that are not bracket punctuation (Ps/Pe): the bracket and
 * parenthesis pieces of U+239B-U+23AD, the top and bottom parentheses U+23DC-U+23E1, the ornate
 * parentheses ﴾ ﴿ (Ps/Pe only since Unicode 14).
 */
const PAREN_LIKE = '\u239b-\u23ad\u23dc-\u23e1\ufd3e\ufd3f';
const NOT_IN_A_NAME = new RegExp(`[\\p{Cc}\\u2028\\u2029\\p{Ps}\\p{Pe}\\p{Pi}\\p{Pf}${COLON_LIKE}${PAREN_LIKE}]`, 'gu');
const MAX_AUTHOR_CHARS = 80;

/**
 * A speaker's name as the transcript shows it: one line, no bracket of any kind, no colon. The
 * name is first folded to its Unicode compatibility form (NFKC), so fullwidth and other look-alike
 * forms (`（assistant）`, `：`) become the plain characters and go with them; then every opening,
 * closing and quotation punctuation (Ps, Pe, Pi, Pf: `(` `[` `{` `«` `「` `‹`…), every colon-like
 * character and every invisible format character are removed.
 */
export function transcriptAuthor(author: string): string {
  const clean = author
    .normalize('NFKC')
    // Invisible characters (zero-width space, bidi controls) would let a name hide what it says.
    .replace(/\p{Cf}/gu, '')
    // Control characters and line breaks, brackets and quotation marks of every kind, colons.
    .replace(NOT_IN_A_NAME, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_AUTHOR_CHARS)
    .trim();
  return clean === '' ? 'someone' : clean;
}

/** How an entry reads in the transcript: its speaker line, its further lines indented. */
export function transcriptLine(m: ContextMessage): string {
  const who = transcriptAuthor(m.author);
  const text = m.text.replace(LINE_BREAK, `\n${TEXT_INDENT}`);
  return m.role === 'assistant' ? `${who} (assistant): ${text}` : `${who}: ${text}`;
}

/** What a line costs in the transcript beyond its text: the speaker prefix and the indents. */
function lineOverhead(m: ContextMessage): number {
  return transcriptLine(m).length - m.text.length;
}

function transcript(entries: readonly ContextMessage[], userText: string): string {
  return `${TRANSCRIPT_START}\n${entries.map(transcriptLine).join('\n')}\n${TRANSCRIPT_END}\n\n${userText}`;
}

/** Cuts a text to `max` characters (an ellipsis marks the cut). */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

export function composeMessage(o: ComposeOptions): ComposedMessage {
  const none: ComposedMessage = { message: o.userText, metadata: {}, included: [] };
  if (o.mode === 'off' || o.context.length === 0 || o.maxContextChars <= 0) return none;

  // Room for the transcript in the message: what CHAT_MAX_MESSAGE_CHARS leaves after the user's
  // words and the delimiters (metadata mode sends no transcript, so only CONTEXT_MAX_CHARS counts).
  const frame = TRANSCRIPT_START.length + TRANSCRIPT_END.length + 3 + o.userText.length;
  let messageRoom =
    o.mode === 'message' && o.maxMessageChars !== undefined ? o.maxMessageChars - frame : Number.POSITIVE_INFINITY;
  let contextRoom = o.maxContextChars;

  const picked: ContextMessage[] = [];
  for (let i = o.context.length - 1; i >= 0; i--) {
    const m = o.context[i] as ContextMessage;
    // A line costs its text, the author prefix, the indents of its further lines and a newline.
    const overhead = lineOverhead(m) + 1;
    const textRoom = Math.min(contextRoom, messageRoom - overhead);
    if (m.text.length <= textRoom) {
      picked.push(m);
      contextRoom -= m.text.length;
      messageRoom -= m.text.length + overhead;
      continue;
    }
    // The newest message alone is too long: a cut of it still says what was being discussed.
    // (The overhead counted the indents of all its lines: a cut has no more of them.)
    if (picked.length === 0 && textRoom >= MIN_CUT_CHARS) picked.push({ ...m, text: cutText(m.text, textRoom) });
    break;
  }
  if (picked.length === 0) return none;
  picked.reverse();
  return {
    message: o.mode === 'message' ? transcript(picked, o.userText) : o.userText,
    metadata: { context: picked },
    included: picked,
  };
}

/** After the upstream refused a message as too long: the newer half of the context (none of one). */
export function fewerContext(context: readonly ContextMessage[]): ContextMessage[] {
  return context.length <= 1 ? [] : context.slice(Math.ceil(context.length / 2));
}

// ---- the message's metadata: where it was written and by whom, its files, the votes it carries ----

/** The upstream's `metadata`: where the message was written (its origin) and by whom. */
export function chatMetadata(msg: IncomingMessage): ChatMetadata {
  const { origin } = msg;
  const md: ChatMetadata = { source: origin.platform };
  if (origin.workspaceId !== undefined) md.workspaceId = origin.workspaceId;
  md.channelId = origin.channelId;
  if (origin.threadId !== undefined) md.threadId = origin.threadId;
  md.userId = msg.userId;
  if (msg.userName !== undefined) md.userName = msg.userName;
  md.messageId = msg.messageId;
  if (msg.forwarded === true) md.forwarded = true;
  if (msg.viewing !== undefined && msg.viewing.length > 0) md.viewing = msg.viewing;
  const files = attachmentInfo(msg.attachments ?? []);
  if (files.length > 0) md.attachments = files;
  return md;
}

/** The `metadata.attachments` entries: files sent as a description, not as text, and not skipped. */
export function attachmentInfo(files: readonly Attachment[]): AttachmentInfo[] {
  return files
    .filter((a) => a.skipped === undefined && a.text === undefined)
    .map((a) => ({ name: a.name, type: a.type, size: a.size, ...(a.url !== undefined ? { url: a.url } : {}) }));
}

/**
 * The user's votes in this conversation not yet sent: they go with the user's next message, and
 * count as delivered once the upstream took it. None when they cannot be read (logged).
 */
export async function pendingVotes(
  store: FeedbackStore | undefined,
  conversationId: string | undefined,
  userId: string,
  log: Logger,
): Promise<FeedbackVote[]> {
  if (store === undefined || conversationId === undefined) return [];
  try {
    return await store.pending(conversationId, userId);
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'reading pending feedback failed');
    return [];
  }
}

/** The votes as the upstream's metadata carries them. */
export function feedbackNotes(votes: FeedbackVote[]): FeedbackNote[] {
  return votes.map((v) => ({ messageId: v.messageId, vote: v.vote, at: new Date(v.at).toISOString() }));
}

// ---- what of a place's history is context: the bridge's own notices and notes left out ----

const PLACEHOLDER = 987_654_321;

/** Text as compared with the bridge's notices: formatting, entities and spacing aside. */
function normalize(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[\u200B_*~`]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A notice template as a pattern over normalized text; numbers it names may be any. */
function templatePattern(template: string): string {
  return escapeRegExp(normalize(template)).replace(String(PLACEHOLDER), '\\d+');
}

/** Every text of MESSAGES, with and without a number where it takes one. */
function noticeTemplates(): string[] {
  return Object.values(MESSAGES).flatMap((v: unknown) => {
    if (typeof v === 'string') return [v];
    if (typeof v === 'function') {
      const f = v as (n?: number) => string;
      return [f(), f(PLACEHOLDER)];
    }
    return [];
  });
}

const WHOLE_NOTICES = noticeTemplates().map((t) => new RegExp(`^${templatePattern(t)}$`));
const RESET_NOTICE = normalize(MESSAGES.reset);
/** Notes the bridge puts before a reply's text. */
const PREFIX_NOTES = [MESSAGES.renewed, MESSAGES.renewedWithContext].map(
  (t) => new RegExp(`^\\s*[_*]*${templatePattern(t)}[_*]*\\s*`),
);
/** Notes the bridge appends to a reply's text. */
const SUFFIX_NOTES = [
  MESSAGES.interrupted,
  MESSAGES.streamError,
  MESSAGES.replyDeadline(PLACEHOLDER),
  MESSAGES.replyTooLong(),
  MESSAGES.replyTooLong(PLACEHOLDER),
].map((t) => new RegExp(`\\s*[_*]*${templatePattern(t)}[_*]*\\s*$`));

/** The bridge's own text without its notes; undefined when it is a notice and nothing else. */
export function assistantText(text: string): string | undefined {
  const n = normalize(text);
  if (WHOLE_NOTICES.some((re) => re.test(n))) return undefined;
  let out = text;
  for (const re of PREFIX_NOTES) out = out.replace(re, '');
  for (const re of SUFFIX_NOTES) out = out.replace(re, '');
  out = out.trim();
  return hasVisibleText(out) ? out : undefined;
}

/**
 * A place's messages (newest first, as read) → the context of a new conversation, oldest first:
 * without the user's current message, without the bridge's notices and notes, and nothing from
 * before the last `reset` of the place (its notice marks where the new conversation began).
 */
export function cleanHistory(newestFirst: readonly PlaceMessage[], currentId: string, max: number): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const m of newestFirst) {
    if (out.length >= max) break;
    if (m.id === currentId) continue;
    let text: string | undefined = m.text;
    if (m.role === 'assistant') {
      if (normalize(m.text) === RESET_NOTICE) break;
      text = assistantText(m.text);
      if (text === undefined) continue;
    } else if (!hasVisibleText(text)) {
      continue;
    }
    out.push({ author: m.author, role: m.role, text: text.trim(), ts: m.ts });
  }
  return out.reverse();
}
