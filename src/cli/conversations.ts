import { scrubbingWriter } from '../scrub.js';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { type Config, ConfigError, type Env, loadConfig, readEnv } from '../config/config.js';
import type { ChatService, ConversationList, HistoryPage } from '../core/chat-port.js';
import type { FeedbackVote } from '../core/ports.js';
import { createFeedbackRepo } from '../store/sqlite/reply-repo.js';
import { createChatService } from '../upstream/index.js';
import { describeError } from './chat.js';

// `assistant-bridge conversations list | show ID`: the upstream's list (A4/B4) and history
// (A3/B3) endpoints as plain aligned tables; `show` adds the votes kept in the bridge's database
// (SQLite at DATABASE_PATH, or PostgreSQL at DATABASE_URL).

export interface ConversationsIo {
  stdout?: { write(s: string): unknown };
  stderr?: { write(s: string): unknown };
  env?: Env;
  createService?: (cfg: Config['upstream']) => ChatService;
  /**
   * The votes on a conversation's replies (default: read from DATABASE_URL's PostgreSQL when it is
   * set, else from DATABASE_PATH when that file exists).
   */
  readVotes?: (database: VoteSource, conversationId: string) => Promise<FeedbackVote[]>;
}

/** Where the votes are: the bridge's database, as the configuration names it. */
export type VoteSource = { postgresUrl: string } | { sqlitePath: string };

/**
 * Votes on an upstream conversation's replies, from the SQLite file, opened read-only: nothing
 * when the file or its feedback table is not there (a database never started, an older schema).
 */
export function localVotes(databasePath: string, conversationId: string): FeedbackVote[] {
  if (databasePath === ':memory:' || !existsSync(databasePath)) return [];
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feedback_votes'").get();
    if (table === undefined) return [];
    return createFeedbackRepo(db).forConversation(conversationId);
  } finally {
    db.close();
  }
}

/**
 * Votes on an upstream conversation's replies, from PostgreSQL (shared by the replicas): nothing
 * when the database has no feedback table yet (never migrated, an older schema). Reads only.
 */
export async function postgresVotes(url: string, conversationId: string): Promise<FeedbackVote[]> {
  // Loaded only here: the SQLite path needs no PostgreSQL driver.
  const { createPgPool, pgFeedback } = await import('../store/pg/index.js');
  const pool = createPgPool(url, { poolMax: 1 });
  try {
    const table = await pool.query<{ t: string | null }>("SELECT to_regclass('feedback_votes')::text AS t");
    if (!table.rows[0]?.t) return [];
    return await pgFeedback((text, values) => pool.query(text, values)).forConversation(conversationId);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** The votes from wherever the bridge keeps them. */
export async function storedVotes(database: VoteSource, conversationId: string): Promise<FeedbackVote[]> {
  return 'postgresUrl' in database
    ? postgresVotes(database.postgresUrl, conversationId)
    : localVotes(database.sqlitePath, conversationId);
}

const USAGE = `usage: assistant-bridge conversations list [--bot ID] [--page N] [--limit N] [--since ISO-DATE]
       assistant-bridge conversations show ID [--bot ID] [--limit N] [--before MSG-ID] [--after MSG-ID]
`;

type Flags = Record<string, string>;
type Command = { cmd: 'list' | 'show'; id?: string; flags: Flags };

const FLAGS: Record<Command['cmd'], string[]> = {
  list: ['bot', 'page', 'limit', 'since'],
  show: ['bot', 'limit', 'before', 'after'],
};

function parseArgs(args: string[]): Command | string {
  const [cmd, ...rest] = args;
  if (cmd !== 'list' && cmd !== 'show')
    return cmd === undefined ? 'a subcommand is needed' : `unknown subcommand "${cmd}"`;
  const flags: Flags = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const value = eq === -1 ? rest[++i] : arg.slice(eq + 1);
    if (!FLAGS[cmd].includes(name)) return `unknown option --${name} for ${cmd}`;
    if (value === undefined || value === '' || value.startsWith('--')) return `--${name} needs a value`;
    flags[name] = value;
  }
  for (const name of ['page', 'limit']) {
    const v = flags[name];
    if (v !== undefined && !/^[1-9]\d{0,5}$/.test(v)) return `--${name} must be a positive whole number, got "${v}"`;
  }
  if (flags.since !== undefined && Number.isNaN(Date.parse(flags.since)))
    return `--since must be an ISO date, got "${flags.since}"`;
  if (cmd === 'show' && positional.length !== 1) return 'show needs exactly one conversation id';
  if (cmd === 'list' && positional.length > 0) return `unexpected argument "${positional[0]}"`;
  return cmd === 'show' ? { cmd, id: positional[0] as string, flags } : { cmd, flags };
}

export async function run(args: string[], io: ConversationsIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  // Errors may quote upstream bodies or driver messages: never a configured secret.
  const stderr = scrubbingWriter(io.stderr ?? process.stderr);
  if (args.includes('--help') || args.includes('-h')) {
    stdout.write(USAGE);
    return 0;
  }
  const parsed = parseArgs(args);
  if (typeof parsed === 'string') {
    stderr.write(`${parsed}\n${USAGE}`);
    return 2;
  }
  const { flags } = parsed;
  let config: Config;
  try {
    const env = io.env ?? readEnv();
    config = loadConfig(flags.bot === undefined ? env : { ...env, CHAT_BOT_ID: flags.bot }, { requirePlatform: false });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    stderr.write(`${err.message}\n`);
    return 2;
  }
  const botId = config.upstream.botId;
  const unsupported = notSupported(parsed.cmd, config.upstream.form);
  if (unsupported !== undefined) {
    stderr.write(`${unsupported}\n`);
    return 1;
  }
  const service = (io.createService ?? createChatService)(config.upstream);
  const num = (name: string) => (flags[name] === undefined ? {} : { [name]: Number(flags[name]) });
  const str = (name: string) => (flags[name] === undefined ? {} : { [name]: flags[name] });
  try {
    if (parsed.cmd === 'list') {
      stdout.write(
        renderList(await service.listConversations(botId, { ...num('page'), ...num('limit'), ...str('since') })),
      );
    } else {
      const id = parsed.id as string;
      stdout.write(
        renderHistory(await service.history(botId, id, { ...num('limit'), ...str('before'), ...str('after') })),
      );
      let votes: FeedbackVote[] = [];
      const database: VoteSource = config.postgres
        ? { postgresUrl: config.postgres.url }
        : { sqlitePath: config.service.databasePath };
      try {
        votes = await (io.readVotes ?? storedVotes)(database, id);
      } catch (err) {
        stderr.write(`could not read the votes from ${await describeSource(database)}: ${String(err)}\n`);
      }
      stdout.write(renderVotes(votes));
    }
    return 0;
  } catch (err) {
    stderr.write(`error: ${describeError(err, botId)}\n`);
    return 1;
  } finally {
    await service.close();
  }
}

/**
 * What this form cannot do, said plainly (not as an upstream error): OpenAI-compatible servers
 * list no conversations, and a Chat Completions conversation lives only in the bridge's store
 * (its transcript), which this command does not read.
 */
function notSupported(cmd: Command['cmd'], form: Config['upstream']['form']): string | undefined {
  if (form === 'chat-completions')
    return (
      `conversations ${cmd} is not supported by CHAT_API_FORM=chat-completions: Chat Completions servers keep no ` +
      'conversations (the bridge keeps each transcript in its own database, for the replies only)'
    );
  if (form === 'responses' && cmd === 'list')
    return (
      'conversations list is not supported by CHAT_API_FORM=responses: Responses servers do not list ' +
      'conversations; `conversations show ID` reads one by a response id'
    );
  return undefined;
}

/** The database for a message: a PostgreSQL URL without its password. */
async function describeSource(database: VoteSource): Promise<string> {
  if (!('postgresUrl' in database)) return database.sqlitePath;
  const { describePgUrl } = await import('../store/pg/index.js');
  return describePgUrl(database.postgresUrl);
}

export function renderList(list: ConversationList): string {
  if (list.conversations.length === 0) return 'no conversations\n';
  const rows = list.conversations.map((c) => [
    c.id,
    c.messageCount === undefined ? '' : String(c.messageCount),
    c.updatedAt ?? c.createdAt ?? '',
    oneLine(c.preview ?? '', 60),
  ]);
  let out = table(['ID', 'MESSAGES', 'UPDATED', 'PREVIEW'], rows);
  const p = list.pagination;
  if (p) {
    const shown = list.conversations.length;
    // Form B gives no total: the client's count of what it has seen then says nothing new.
    const seen = (p.page - 1) * p.limit + shown;
    const total = !p.hasMore || p.total > seen ? ` of ${p.total}` : '';
    out += `page ${p.page}, ${shown} shown${total}${p.hasMore ? ', more on the next page' : ''}\n`;
  }
  return out;
}

export function renderHistory(page: HistoryPage): string {
  const facts = [
    page.messageCount !== undefined ? `${page.messageCount} messages` : undefined,
    page.createdAt ? `created ${page.createdAt}` : undefined,
  ].filter(Boolean);
  let out = `conversation ${page.conversationId}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}\n`;
  if (page.messages.length === 0) return `${out}no messages\n`;
  out += table(
    ['TIME', 'ROLE', 'MESSAGE'],
    page.messages.map((m) => [m.timestamp ?? '', m.role, m.content]),
  );
  if (page.hasMore) out += 'more messages: page with --before/--after and a message id\n';
  return out;
}

/** The votes on the conversation's replies, below the history (nothing when there are none). */
export function renderVotes(votes: FeedbackVote[]): string {
  if (votes.length === 0) return '';
  const rows = votes.map((v) => [
    new Date(v.at).toISOString(),
    v.userId,
    v.vote,
    v.deliveredAt === undefined ? 'pending' : 'sent',
    v.messageId,
  ]);
  return `\nfeedback (${votes.length} ${votes.length === 1 ? 'vote' : 'votes'})\n${table(['TIME', 'USER', 'VOTE', 'UPSTREAM', 'MESSAGE'], rows)}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Columns padded to their widest cell; the last column is not padded and may hold several
 * lines, which continue under it.
 */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (i === head.length - 1 ? 0 : Array.from(r[i] ?? '').length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 ? c : c + ' '.repeat(Math.max(0, (widths[i] ?? 0) - Array.from(c).length)),
      )
      .join('  ')
      .trimEnd();
  const indent = ' '.repeat(widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0));
  const out = [line(head), line(widths.map((w, i) => '-'.repeat(i === head.length - 1 ? (head[i]?.length ?? 3) : w)))];
  for (const r of rows) {
    const [first = '', ...more] = (r[r.length - 1] ?? '').split('\n');
    out.push(line([...r.slice(0, -1), first]));
    for (const m of more) out.push(`${indent}${m}`.trimEnd());
  }
  return `${out.join('\n')}\n`;
}
