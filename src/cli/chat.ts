import { scrubbingWriter } from '../scrub.js';
import { createInterface, type Interface } from 'node:readline';
import { type Config, ConfigError, type Env, loadConfig, readEnv } from '../config/config.js';
import { ChatError, type ChatService } from '../core/chat-port.js';
import { createChatService, type UpstreamClientOptions } from '../upstream/index.js';
import { NOT_CHAT_API } from '../upstream/mapping.js';

// `assistant-bridge chat [--bot ID]`: a conversation with the upstream bot in the terminal.
// On a TTY: a `> ` prompt, replies streamed as they arrive, Ctrl-D or Ctrl-C to leave. Otherwise
// one message per input line, each full reply on stdout followed by a newline, exit 0 at the end
// of input; an error is one line on stderr and exit 1.

export interface ChatIo {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout?: NodeJS.WritableStream;
  stderr?: { write(s: string): unknown };
  /** The environment (default: the process environment over `.env`). */
  env?: Env;
  createService?: (cfg: Config['upstream'] & Pick<UpstreamClientOptions, 'onRetry'>) => ChatService;
}

const USAGE = `usage: assistant-bridge chat [--bot ID]
  Talks to the upstream bot (CHAT_BOT_ID, or --bot). /reset starts a new conversation;
  /exit (or Ctrl-D, Ctrl-C) leaves. Piped input: one message a line, each reply on stdout.
`;

export async function run(args: string[], io: ChatIo = {}): Promise<number> {
  const stdin = io.stdin ?? process.stdin;
  const stdout = io.stdout ?? process.stdout;
  // Errors may quote upstream bodies or SDK messages: never a configured secret.
  const stderr = scrubbingWriter(io.stderr ?? process.stderr);

  const parsed = parseArgs(args);
  if (parsed === 'help') {
    stdout.write(USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    stderr.write(`${parsed}\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    const env = io.env ?? readEnv();
    config = loadConfig(parsed.bot === undefined ? env : { ...env, CHAT_BOT_ID: parsed.bot }, {
      requirePlatform: false,
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    stderr.write(`${err.message}\n`);
    return 2;
  }

  const service = (io.createService ?? createChatService)({
    ...config.upstream,
    onRetry: retryNotes((note) => stderr.write(`(${note})\n`)),
  });
  const conversation = new TerminalConversation(service, config.upstream, (note) => stderr.write(`(${note})\n`));
  try {
    return stdin.isTTY
      ? await interactive(conversation, stdin, stdout, stderr)
      : await piped(conversation, stdin, stdout, stderr);
  } finally {
    await service.close();
  }
}

function parseArgs(args: string[]): { bot?: string } | 'help' | string {
  const out: { bot?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--bot' || arg.startsWith('--bot=')) {
      const value = arg === '--bot' ? args[++i] : arg.slice('--bot='.length);
      if (!value || value.startsWith('--')) return '--bot needs a bot id';
      out.bot = value;
      continue;
    }
    return `unexpected argument "${arg}"`;
  }
  return out;
}

/** Reads one message per line; stops at the first error. */
async function piped(
  conversation: TerminalConversation,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
  stderr: { write(s: string): unknown },
): Promise<number> {
  const rl = createInterface({ input: stdin, crlfDelay: Number.POSITIVE_INFINITY, terminal: false });
  try {
    for await (const line of rl) {
      const message = line.trim();
      if (message === '') continue;
      if (message === '/reset') {
        conversation.reset();
        continue;
      }
      const wrote = await turn(conversation, message, stdout, stderr);
      if (!wrote) return 1;
    }
    return 0;
  } finally {
    rl.close();
  }
}

/** A prompt; errors are reported and the conversation goes on. */
async function interactive(
  conversation: TerminalConversation,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
  stderr: { write(s: string): unknown },
): Promise<number> {
  const rl: Interface = createInterface({ input: stdin, output: stdout, prompt: '> ', terminal: true });
  let current: AbortController | undefined;
  let leaving = false;
  rl.on('SIGINT', () => {
    leaving = true;
    current?.abort(new Error('interrupted by the user'));
    rl.close();
  });
  stdout.write(`Talking to ${conversation.botId}. /reset starts a new conversation; /exit, Ctrl-D or Ctrl-C leaves.\n`);
  rl.prompt();
  try {
    for await (const line of rl) {
      const message = line.trim();
      if (message === '/reset') {
        conversation.reset();
        stdout.write('(new conversation)\n');
      } else if (message === '/exit' || message === '/quit') {
        break;
      } else if (message !== '') {
        current = new AbortController();
        await turn(conversation, message, stdout, stderr, current.signal);
        current = undefined;
      }
      if (leaving) break;
      rl.prompt();
    }
  } finally {
    rl.close();
    stdout.write('\n');
  }
  return 0;
}

/** One message and its reply, streamed to stdout. False when it failed (the error is on stderr). */
async function turn(
  conversation: TerminalConversation,
  message: string,
  stdout: NodeJS.WritableStream,
  stderr: { write(s: string): unknown },
  signal?: AbortSignal,
): Promise<boolean> {
  let wroteText = false;
  try {
    await conversation.say(
      message,
      (text) => {
        wroteText = true;
        stdout.write(text);
      },
      signal,
    );
    stdout.write('\n');
    return true;
  } catch (err) {
    if (wroteText) stdout.write(err instanceof ChatError && err.kind === 'interrupted' ? ' […cut off]\n' : '\n');
    if (signal?.aborted) return false;
    stderr.write(`error: ${describeError(err, conversation.botId)}\n`);
    return false;
  }
}

/** A wait shown as people read it: "20 s", "0.5 s". */
const seconds = (ms: number) => `${ms >= 1000 ? Math.round(ms / 1000) : Math.round(ms / 100) / 10} s`;

/** Waited this long (in the waits' own sum) since the last note, the next retry is said again. */
const NOTE_EVERY_MS = 5_000;

/**
 * What the user sees while the client waits to retry (a 429's Retry-After, a 5xx's backoff),
 * instead of silence: the first retry of a call, then one note per NOTE_EVERY_MS waited.
 */
export function retryNotes(note: (text: string) => void): (err: ChatError, attempt: number, waitMs: number) => void {
  let waited = 0;
  let notedAt = Number.NEGATIVE_INFINITY;
  return (err, attempt, waitMs) => {
    if (attempt === 1) {
      waited = 0;
      notedAt = Number.NEGATIVE_INFINITY;
    }
    if (waited - notedAt >= NOTE_EVERY_MS) {
      notedAt = waited;
      const status = err.details.status === undefined ? '' : ` (${err.details.status})`;
      const what =
        err.kind === 'rate_limited'
          ? `the assistant is busy${status}`
          : err.kind === 'network'
            ? 'cannot reach the assistant'
            : `the assistant failed to answer${status}`;
      note(`${what}, retrying in ${seconds(waitMs)}`);
    }
    waited += waitMs;
  };
}

/** One readable line for a failure; the details after the summary. */
export function describeError(err: unknown, botId: string): string {
  if (!(err instanceof ChatError)) return err instanceof Error ? err.message : String(err);
  const summary: Record<ChatError['kind'], string> = {
    rate_limited: 'the assistant is busy, try again shortly',
    server: 'the assistant failed to answer',
    network: 'cannot reach the assistant (check CHAT_API_URL)',
    timeout: 'the assistant did not answer in time',
    unauthorized: 'the assistant refused the API key (check CHAT_API_KEY)',
    too_long: 'the message is too long',
    unknown_bot: `the bot "${botId}" does not exist (check CHAT_BOT_ID or --bot)`,
    conversation_gone: 'unknown conversation: the upstream does not know this id (mistyped, deleted or expired)',
    bad_request: 'the assistant refused the request',
    stream_error: 'the assistant reported an error while answering',
    interrupted: 'the reply was cut off',
  };
  if (err.details.code === NOT_CHAT_API) return `${err.message} (check CHAT_API_URL)`;
  return `${summary[err.kind]}: ${err.message}`;
}

/** The conversation of this terminal: its upstream id across turns, reset, renewal. */
export class TerminalConversation {
  readonly botId: string;
  private conversationId: string | undefined;
  /** Form A: a stream showed no conversation id, so first turns use A1 (which always does). */
  private firstTurnBySend = false;

  constructor(
    private readonly service: ChatService,
    private readonly cfg: Pick<Config['upstream'], 'botId' | 'streaming' | 'maxMessageChars'>,
    private readonly note: (text: string) => void,
  ) {
    this.botId = cfg.botId;
    this.conversationId = service.mintConversationId();
  }

  /** A new conversation; what was learnt about the upstream (firstTurnBySend) stays. */
  reset(): void {
    this.conversationId = this.service.mintConversationId();
  }

  async say(message: string, onText: (text: string) => void, signal?: AbortSignal): Promise<void> {
    const max = this.cfg.maxMessageChars;
    if (max !== undefined && message.length > max) {
      throw new ChatError('too_long', `${message.length} characters, the limit is ${max} (CHAT_MAX_MESSAGE_CHARS)`);
    }
    try {
      await this.once(message, onText, signal);
    } catch (err) {
      if (!(err instanceof ChatError && err.kind === 'conversation_gone' && this.conversationId !== undefined))
        throw err;
      this.note('the earlier conversation has expired; starting a new one, earlier context was not kept');
      this.reset();
      await this.once(message, onText, signal);
    }
  }

  private async once(message: string, onText: (text: string) => void, signal?: AbortSignal): Promise<void> {
    const req = {
      botId: this.botId,
      message,
      metadata: { source: 'terminal' as const },
      ...(this.conversationId !== undefined ? { conversationId: this.conversationId } : {}),
      ...(signal ? { signal } : {}),
    };
    if (!this.cfg.streaming || (this.firstTurnBySend && this.conversationId === undefined)) {
      const reply = await this.service.send(req);
      onText(reply.text);
      this.conversationId ??= reply.conversationId;
      return;
    }
    const stream = await this.service.stream(req);
    let learned = stream.conversationId;
    try {
      for await (const ev of stream) {
        if (ev.type === 'text') onText(ev.text);
        else if (ev.type === 'ids' && ev.conversationId !== undefined) learned ??= ev.conversationId;
      }
    } finally {
      stream.cancel();
    }
    if (this.conversationId === undefined) {
      this.conversationId = learned;
      if (learned === undefined && this.service.capabilities.idsFromReplies) this.firstTurnBySend = true;
    }
  }
}
