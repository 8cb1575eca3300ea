import { HttpError } from './http-util.js';

// Embeds on a bot's message, checked as Discord checks them (the part of it the bridge uses): at
// most 10, each an object, an image's `url` an http(s) URL. A bad one is 50035 Invalid Form Body
// on `embeds`, like Discord's answer.

const MAX_EMBEDS = 10;

/** The embeds a create or edit body sets, or undefined when it leaves them as they are. */
export function embedsOf(body: Record<string, unknown>): unknown[] | undefined {
  if (!('embeds' in body)) return undefined;
  const embeds = body.embeds;
  if (!Array.isArray(embeds) || embeds.length > MAX_EMBEDS) throw invalidEmbeds();
  for (const e of embeds) {
    if (typeof e !== 'object' || e === null) throw invalidEmbeds();
    const image = (e as { image?: unknown }).image;
    if (image === undefined) continue;
    const url = (image as { url?: unknown }).url;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw invalidEmbeds();
  }
  return embeds as unknown[];
}

function invalidEmbeds(): HttpError {
  return new HttpError(400, { code: 50035, message: 'Invalid Form Body', errors: { embeds: {} } });
}
