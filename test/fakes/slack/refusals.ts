// Ways Slack refuses a write for its form, for the fake Slack (web-api.ts asks its `refuse`
// before a write takes effect). Each is a plausible shape of a real workspace or of Slack's
// changing rules, as documented or as other apps' users reported them: the table block in the
// message's `blocks` (apps report `invalid_blocks`; it belongs in `attachments`), any table at
// all, a second table (`only_one_table_allowed`), Block Kit text beyond an unstated total
// (`msg_blocks_too_long`, bolt-js#2509 at about 13,200 characters), no blocks at all, Markdown
// refused or capped (`markdown_text_too_long`). A refusal answers the Slack error code; the
// bridge never knows which shape is in force. A seeded chaos mode can drive `refuse` at random.

/** Given a Web API method and its arguments as sent, the error Slack answers, or undefined. */
export type SlackRefusal = (method: string, args: Record<string, unknown>) => string | undefined;

/** The write methods that carry message content. */
const CONTENT_METHODS = new Set([
  'chat.postMessage',
  'chat.update',
  'chat.startStream',
  'chat.appendStream',
  'chat.stopStream',
  'chat.postEphemeral',
]);

type Block = Record<string, unknown>;

/** An argument sent as JSON (a form body) or as a value (a JSON body). */
function jsonArg(a: Record<string, unknown>, key: string): unknown {
  const v = a[key];
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** The message's own blocks, as sent. */
export function topBlocks(a: Record<string, unknown>): Block[] {
  const b = jsonArg(a, 'blocks');
  return Array.isArray(b) ? (b as Block[]) : [];
}

/** The blocks inside the message's attachments. */
export function attachmentBlocks(a: Record<string, unknown>): Block[] {
  const list = jsonArg(a, 'attachments');
  if (!Array.isArray(list)) return [];
  return (list as { blocks?: unknown }[]).flatMap((x) => (Array.isArray(x?.blocks) ? (x.blocks as Block[]) : []));
}

const isTable = (b: Block) => b.type === 'table' || b.type === 'data_table';

/** Refuses only content writes; other calls (reactions, reads) pass. */
function onContent(decide: SlackRefusal): SlackRefusal {
  return (method, args) => (CONTENT_METHODS.has(method) ? decide(method, args) : undefined);
}

export const slackRefusals = {
  /** A table block in the message's own `blocks` (Slack wants it in an attachment). */
  tableInBlocks: (): SlackRefusal => onContent((_m, a) => (topBlocks(a).some(isTable) ? 'invalid_blocks' : undefined)),
  /** Any table block anywhere (a workspace, or a client generation, without tables). */
  anyTable: (): SlackRefusal =>
    onContent((_m, a) => {
      if (topBlocks(a).some(isTable)) return 'invalid_blocks';
      return attachmentBlocks(a).some(isTable) ? 'invalid_attachments' : undefined;
    }),
  /** More than `max` tables in one message (Slack: one). */
  tablesOver: (max = 1): SlackRefusal =>
    onContent((_m, a) =>
      [...topBlocks(a), ...attachmentBlocks(a)].filter(isTable).length > max ? 'only_one_table_allowed' : undefined,
    ),
  /** Blocks and attachments whose JSON is longer than `max` characters in all. */
  blocksLongerThan: (max: number): SlackRefusal =>
    onContent((_m, a) => {
      const size = JSON.stringify(topBlocks(a)).length + JSON.stringify(attachmentBlocks(a)).length;
      return size > max ? 'msg_blocks_too_long' : undefined;
    }),
  /** Any non-empty `blocks` or `attachments` (clearing them with `[]` passes). */
  anyBlocks: (): SlackRefusal =>
    onContent((_m, a) => (topBlocks(a).length > 0 || attachmentBlocks(a).length > 0 ? 'invalid_blocks' : undefined)),
  /** Blocks of a type (e.g. `context_actions`, where feedback buttons are unknown). */
  blockType: (type: string): SlackRefusal =>
    onContent((_m, a) =>
      [...topBlocks(a), ...attachmentBlocks(a)].some((b) => b.type === type) ? 'invalid_blocks' : undefined,
    ),
  /** `markdown_text` (or a markdown chunk) longer than `max` characters. */
  markdownLongerThan: (max: number): SlackRefusal =>
    onContent((_m, a) => {
      const md = typeof a.markdown_text === 'string' ? a.markdown_text : '';
      const chunks = jsonArg(a, 'chunks');
      const inChunks = Array.isArray(chunks)
        ? (chunks as { text?: unknown }[]).reduce((n, c) => n + (typeof c?.text === 'string' ? c.text.length : 0), 0)
        : 0;
      return md.length > max || inChunks > max ? 'markdown_text_too_long' : undefined;
    }),
  /** Any Markdown (`markdown_text`, markdown chunks or a markdown block) on the given methods (all content writes by default). */
  markdown: (methods?: readonly string[]): SlackRefusal =>
    onContent((m, a) => {
      if (methods !== undefined && !methods.includes(m)) return undefined;
      const md = a.markdown_text !== undefined || Array.isArray(jsonArg(a, 'chunks'));
      return md || topBlocks(a).some((b) => b.type === 'markdown') ? 'invalid_arguments' : undefined;
    }),
  /** `text` longer than `max` characters (Slack's 4,000 guidance enforced early). */
  textLongerThan: (max: number): SlackRefusal =>
    onContent((_m, a) => (typeof a.text === 'string' && a.text.length > max ? 'msg_too_long' : undefined)),
  /** The first refusal of any of these. */
  anyOf:
    (...shapes: SlackRefusal[]): SlackRefusal =>
    (method, args) => {
      for (const s of shapes) {
        const r = s(method, args);
        if (r !== undefined) return r;
      }
      return undefined;
    },
};
