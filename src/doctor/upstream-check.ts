import type { UpstreamConfig } from '../config/config.js';
import { type Answer, excerpt, type CheckClient, CheckError, showUrl } from './http.js';
import { checkOpenAiUpstream } from './openai-check.js';
import { type BotToCheck, type CheckRow, fail, ok, skip } from './types.js';

// The upstream: reachable, the key accepted, and every bot id the configuration names known.
// Each check is a real listing request (A4 / B4 with limit=1): cheap, read-only, and it needs
// both a valid key and a valid bot, so a 200 proves all three.

type Verdict = { kind: 'ok'; answer: Answer } | { kind: 'unknown_bot' | 'unauthorized' | 'other'; answer: Answer };

export function listUrl(up: UpstreamConfig, botId: string): string {
  const base = up.url.replace(/\/+$/, '');
  return up.form === 'a'
    ? `${base}/api/v1/chat/${encodeURIComponent(botId)}/conversations?limit=1`
    : `${base}/v1/chat/conversations?bot_id=${encodeURIComponent(botId)}&limit=1`;
}

function classify(up: UpstreamConfig, answer: Answer): Verdict {
  const code = errorCode(answer);
  if (answer.status === 401 || code === 'UNAUTHORIZED') return { kind: 'unauthorized', answer };
  if (up.form === 'a' ? answer.status === 404 : code === 'INVALID_BOT_ID') return { kind: 'unknown_bot', answer };
  if (answer.status >= 200 && answer.status < 300 && answer.json !== undefined) return { kind: 'ok', answer };
  return { kind: 'other', answer };
}

/**
 * A CHAT_API_URL whose path already holds the form's own prefix (`…/api/v1` for Form A, `…/v1`
 * for Form B, or a longer piece of the endpoint): the bridge adds that prefix itself, so every
 * request goes to `…/api/v1/api/v1/chat/…` and 404s, which would otherwise be blamed on the bot
 * id. Undefined when the path does not look like that.
 */
export function urlPathMistake(up: UpstreamConfig): string | undefined {
  const base = new URL(up.url);
  const path = base.pathname.replace(/\/+$/, '');
  const prefix = up.form === 'a' ? '/api/v1' : up.form === 'b' ? '/v1' : undefined;
  if (prefix === undefined) return undefined;
  const suspect = [prefix, `${prefix}/chat`, '/api', '/api/v1', '/v1', '/v1/chat', '/api/v1/chat'].find((p) =>
    path.toLowerCase().endsWith(p),
  );
  if (suspect === undefined) return undefined;
  const fixed = `${base.origin}${path.slice(0, path.length - suspect.length)}`;
  return `CHAT_API_URL ends in ${suspect}, but the bridge adds ${prefix}/chat/… itself (Form ${up.form.toUpperCase()}): set CHAT_API_URL=${fixed}`;
}

function errorCode(a: Answer): string | undefined {
  const e = (a.json as { error?: { code?: unknown } } | undefined)?.error;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' ? e.code : undefined;
}

/** Every bot the configuration can route to: the default first, then BOT_ROUTES in order. */
export function botsToCheck(up: UpstreamConfig): BotToCheck[] {
  const bots = [{ botId: up.botId, namedBy: 'CHAT_BOT_ID' }];
  for (const r of up.routes) {
    const where = `${r.platform}:${r.workspaceId}${r.channelId ? `/${r.channelId}` : ''}`;
    const known = bots.find((b) => b.botId === r.botId);
    if (known) {
      if (known.namedBy !== 'CHAT_BOT_ID') known.namedBy += `, ${where}`;
    } else {
      bots.push({ botId: r.botId, namedBy: `BOT_ROUTES ${where}` });
    }
  }
  return bots;
}

export async function checkUpstream(up: UpstreamConfig, http: CheckClient): Promise<CheckRow[]> {
  if (up.form === 'chat-completions' || up.form === 'responses') return checkOpenAiUpstream(up, http, botsToCheck(up));
  const where = `${showUrl(up.url)} (Form ${up.form.toUpperCase()})`;
  const auth = { authorization: `Bearer ${up.apiKey}`, accept: 'application/json' };
  const [first, ...others] = botsToCheck(up);
  if (first === undefined) return [];

  let answer: Answer;
  try {
    answer = await http.get(listUrl(up, first.botId), auth);
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return [
      fail(
        'upstream reachable',
        `${where}: ${err.message}`,
        err.kind === 'timeout'
          ? 'the upstream did not answer in time: check CHAT_API_URL and the network'
          : 'check CHAT_API_URL (scheme, host, port) and that the service is running',
      ),
      skip('upstream API key', 'upstream not reachable'),
      ...[first, ...others].map((b) => skip(botCheck(b.botId), 'upstream not reachable')),
    ];
  }

  const rows = [ok('upstream reachable', `${where} answered ${answer.status} in ${answer.ms} ms`)];
  const verdict = classify(up, answer);
  const pathMistake = verdict.kind === 'unknown_bot' || verdict.kind === 'other' ? urlPathMistake(up) : undefined;
  if (pathMistake !== undefined) {
    // The URL first: with the prefix twice, no bot id can be known (and the key is not judged).
    return [
      ...rows,
      fail(
        'upstream URL',
        `the listing answered ${answer.status} at ${showUrl(listUrl(up, first.botId))}`,
        pathMistake,
      ),
      skip('upstream API key', 'CHAT_API_URL to fix first'),
      ...[first, ...others].map((b) => skip(botCheck(b.botId), 'CHAT_API_URL to fix first')),
    ];
  }
  if (verdict.kind === 'unauthorized') {
    rows.push(
      fail(
        'upstream API key',
        `refused (${answer.status})`,
        `CHAT_API_KEY was refused (${answer.status}): check the key`,
      ),
    );
    for (const b of [first, ...others]) rows.push(skip(botCheck(b.botId), 'API key refused'));
    return rows;
  }
  if (verdict.kind === 'other') {
    rows.push(skip('upstream API key', `no verdict: the listing answered ${answer.status}`));
  } else {
    rows.push(ok('upstream API key', 'accepted'));
  }
  rows.push(botRow(up, first, verdict));

  const rest = await Promise.all(
    others.map(async (b) => {
      try {
        return botRow(up, b, classify(up, await http.get(listUrl(up, b.botId), auth)));
      } catch (err) {
        if (!(err instanceof CheckError)) throw err;
        return fail(botCheck(b.botId), err.message, 'the upstream stopped answering: try again');
      }
    }),
  );
  return [...rows, ...rest];
}

const botCheck = (botId: string) => `bot ${botId}`;

function botRow(up: UpstreamConfig, bot: BotToCheck, v: Verdict): CheckRow {
  const name = botCheck(bot.botId);
  const variable = bot.namedBy === 'CHAT_BOT_ID' ? 'CHAT_BOT_ID' : 'BOT_ROUTES';
  switch (v.kind) {
    case 'ok':
      return ok(name, `known (${bot.namedBy})${countOf(up, v.answer)}`);
    case 'unknown_bot':
      return fail(
        name,
        `bot id unknown (${v.answer.status}${errorCode(v.answer) ? ` ${errorCode(v.answer)}` : ''}; ${bot.namedBy})`,
        up.form === 'a'
          ? `${variable} names a bot the upstream does not know: check the id (a 404 can also mean CHAT_API_URL or CHAT_API_FORM is wrong)`
          : `${variable} names a bot the upstream does not know: check the id`,
      );
    case 'unauthorized':
      return fail(name, `refused (${v.answer.status})`, 'CHAT_API_KEY is not allowed to use this bot');
    case 'other':
      return fail(
        name,
        `unexpected answer ${v.answer.status}: ${excerpt(v.answer) || '(empty body)'}`,
        v.answer.status >= 500
          ? 'the upstream failed: try again later or ask its operator'
          : v.answer.status < 300
            ? 'the answer is not JSON: is CHAT_API_URL the API base URL?'
            : 'check CHAT_API_URL and CHAT_API_FORM (a, b, chat-completions or responses)',
      );
  }
}

/** ", 12 conversations" when the listing says how many; nothing otherwise. */
function countOf(up: UpstreamConfig, a: Answer): string {
  const j = a.json as { data?: { pagination?: { total?: unknown } } } | undefined;
  const total = up.form === 'a' ? j?.data?.pagination?.total : undefined;
  return typeof total === 'number' ? `, ${total} conversation${total === 1 ? '' : 's'}` : '';
}
