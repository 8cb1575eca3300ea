import { HttpError } from './http-util.js';

// Ways Discord refuses a message write for its form, for the fake Discord (rest.ts asks its
// `refuse` before a write takes effect): 50035 Invalid Form Body, its `errors` naming the field.
// Plausible shapes: components a client or an app's state does not take (a button's custom id,
// a row), embeds, or content over a limit. A refusal names the field; the bridge never knows
// which shape is in force. A seeded chaos mode can drive `refuse` at random.

/**
 * Given `METHOD /path` (under /api/v10) and the JSON body, the form field Discord refuses
 * (`components`, `embeds`, `content`), or undefined.
 */
export type DiscordRefusal = (method: string, body: Record<string, unknown>) => string | undefined;

/** Message creates and edits: channel messages, interaction responses and follow-ups. */
const MESSAGE_WRITE =
  /^(POST|PATCH) \/(channels\/\d+\/messages(\/\d+)?|webhooks\/\d+\/[^/]+(\/messages\/(@original|\d+))?)$/;

const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;

function onMessageWrites(decide: (body: Record<string, unknown>) => string | undefined): DiscordRefusal {
  return (method, body) => (MESSAGE_WRITE.test(method) ? decide(body) : undefined);
}

export const discordRefusals = {
  /** Any non-empty `components` (an empty list, which clears them, passes). */
  components: (): DiscordRefusal => onMessageWrites((b) => (nonEmpty(b.components) ? 'components' : undefined)),
  /** Any non-empty `embeds`. */
  embeds: (): DiscordRefusal => onMessageWrites((b) => (nonEmpty(b.embeds) ? 'embeds' : undefined)),
  /** Components or embeds. */
  rich: (): DiscordRefusal =>
    onMessageWrites((b) => (nonEmpty(b.components) ? 'components' : nonEmpty(b.embeds) ? 'embeds' : undefined)),
  /** Content longer than `max` characters. */
  contentOver: (max: number): DiscordRefusal =>
    onMessageWrites((b) => (typeof b.content === 'string' && b.content.length > max ? 'content' : undefined)),
};

/** Discord's answer to a refused field. */
export function invalidFormBody(field: string): HttpError {
  return new HttpError(400, {
    code: 50035,
    message: 'Invalid Form Body',
    errors: { [field]: { _errors: [{ code: 'BASE_TYPE_INVALID', message: `Invalid ${field}.` }] } },
  });
}
