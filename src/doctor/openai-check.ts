import type { UpstreamConfig } from '../config/config.js';
import { type Answer, CheckError, type CheckClient, showUrl } from './http.js';
import { type BotToCheck, type CheckRow, fail, ok, skip } from './types.js';

// The upstream of the OpenAI-compatible forms (CHAT_API_FORM=chat-completions or responses): one
// `GET {base}/v1/models`, cheap and read-only. Reachable; the key accepted (401/403: refused);
// and, where the server lists its models, every model the configuration names (CHAT_BOT_ID,
// BOT_ROUTES) among them. A server that lists no models (404) leaves the models unchecked.

/** OpenAI's base URL as users write it, `/v1` added when missing (as src/upstream does). */
export function modelsUrl(url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = `${/\/v1$/.test(path) ? path : `${path}/v1`}/models`;
  u.search = '';
  return u.toString();
}

const formName = (up: UpstreamConfig) => (up.form === 'responses' ? 'Responses' : 'Chat Completions');

export async function checkOpenAiUpstream(
  up: UpstreamConfig,
  http: CheckClient,
  bots: BotToCheck[],
): Promise<CheckRow[]> {
  const where = `${showUrl(up.url)} (${formName(up)})`;
  const modelRow = (b: { botId: string }) => `model ${b.botId}`;
  let answer: Answer;
  try {
    answer = await http.get(modelsUrl(up.url), { authorization: `Bearer ${up.apiKey}`, accept: 'application/json' });
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return [
      fail(
        'upstream reachable',
        `${where}: ${err.message}`,
        "check CHAT_API_URL (the server's OpenAI base URL, e.g. http://localhost:11434/v1) and that it is running",
      ),
      skip('upstream API key', 'upstream not reachable'),
      ...bots.map((b) => skip(modelRow(b), 'upstream not reachable')),
    ];
  }
  const rows = [ok('upstream reachable', `${where} answered ${answer.status} in ${answer.ms} ms`)];
  if (answer.status === 401 || answer.status === 403) {
    rows.push(
      fail(
        'upstream API key',
        `refused (${answer.status})`,
        `CHAT_API_KEY was refused (${answer.status}): check the key`,
      ),
    );
    return [...rows, ...bots.map((b) => skip(modelRow(b), 'API key refused'))];
  }
  const models = modelIds(answer);
  if (models === undefined) {
    const why = `the server lists no models (GET /v1/models answered ${answer.status})`;
    rows.push(skip('upstream API key', `no verdict: ${why}`));
    return [...rows, ...bots.map((b) => skip(modelRow(b), `not checked: ${why}`))];
  }
  rows.push(ok('upstream API key', 'accepted'));
  for (const b of bots) {
    const variable = b.namedBy === 'CHAT_BOT_ID' ? 'CHAT_BOT_ID' : 'BOT_ROUTES';
    rows.push(
      models.includes(b.botId)
        ? ok(modelRow(b), `listed (${b.namedBy})`)
        : fail(
            modelRow(b),
            `not among the ${models.length} models the server lists (${b.namedBy})${sample(models)}`,
            `${variable} names the model: use one the server lists at /v1/models`,
          ),
    );
  }
  return rows;
}

/** The listed model ids (`{data: [{id}]}`), or undefined when the answer is no model list. */
function modelIds(a: Answer): string[] | undefined {
  if (a.status < 200 || a.status >= 300) return undefined;
  const data = (a.json as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return undefined;
  return data
    .map((m: unknown) => (typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : undefined))
    .filter((id): id is string => typeof id === 'string');
}

const sample = (models: string[]) =>
  models.length === 0 ? '' : `: ${models.slice(0, 5).join(', ')}${models.length > 5 ? ', …' : ''}`;
