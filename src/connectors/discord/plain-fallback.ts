import { DiscordAPIError } from 'discord.js';
import type { Logger } from '../../logger.js';
import { PLAIN_FALLBACK, PlatformWriteError } from '../../core/ports.js';
import { plainParts } from '../plain-parts.js';
import stringWidth from 'string-width';
import type { MonospaceOptions } from '../../core/reply/tables.js';

// A write Discord refuses for its form (50035 Invalid Form Body on `components`, `embeds` or the
// content) is sent again at once with the same words as plain content: no components, no embeds,
// cut at 2,000 characters. From then on the reply writes plain content only (its Stop and
// feedback buttons are gone; `stop` written in the place still stops it), so a write the
// scheduler retries goes straight to what Discord took. A reply is never lost to a refused format.

/** Discord's longest message content. */
export const DISCORD_MAX_CHARS = 2000;
/**
 * A table row at most this wide: about what a desktop code block shows without wrapping (and far
 * below a message, so a row with a reopened fence always fits). A wider table is cut by columns.
 */
export const DISCORD_TABLES: MonospaceOptions = { widthOf: stringWidth, maxLineWidth: 100 };

/** Discord's JSON error code for a request body it refuses (docs: JSON Error Codes). */
export const INVALID_FORM_BODY = 50035;

/** `invalid_form_body` and the refused field (`invalid_form_body:components`), or undefined. */
export function formRefusalField(err: unknown): string | undefined {
  if (!(err instanceof DiscordAPIError) || Number(err.code) !== INVALID_FORM_BODY) return undefined;
  const errors = (err.rawError as { errors?: Record<string, unknown> } | undefined)?.errors;
  const field = errors === undefined ? undefined : Object.keys(errors)[0];
  return field === undefined ? 'invalid_form_body' : `invalid_form_body:${field.replace(/[^a-z_]/gi, '')}`;
}

export type Body = Record<string, unknown>;

export interface PlainFallback {
  /**
   * Sends `body`, or its content plainly once Discord refused a form of this reply (a refusal
   * throws PLAIN_FALLBACK: the writer sends again at once on a new grant, plainly): `overflow` holds the parts beyond the first, for the
   * caller to post after it (a final write) or drop (the next write carries them again).
   */
  send<T>(body: Body, edit: boolean, call: (body: Body) => Promise<T>): Promise<{ value: T; overflow: string[] }>;
  /** The refusals since the last call (for the write's `fallbacks`). */
  take(): { fallbacks?: string[] };
}

export function createPlainFallback(logger: Logger): PlainFallback {
  let plain = false;
  let refused: string[] = [];
  return {
    async send(body, edit, call) {
      if (!plain) {
        try {
          return { value: await call(body), overflow: [] };
        } catch (err) {
          const reason = formRefusalField(err);
          if (reason === undefined) throw err;
          plain = true;
          refused.push(reason);
          logger.warn({ reason }, 'Discord refused a write for its form; sending the words as plain content');
          // Again at once, but on a new grant: the refused call counted against the rate limit.
          throw new PlatformWriteError(`Discord refused the write's form: ${reason}`, PLAIN_FALLBACK, true);
        }
      }
      const content = typeof body.content === 'string' ? body.content : '';
      const [first = '…', ...overflow] = plainParts(content, DISCORD_MAX_CHARS, DISCORD_TABLES);
      const { components: _c, embeds: _e, ...rest } = body;
      // An edit clears what an earlier write left (Discord keeps components an edit leaves out).
      const plainBody: Body = { ...rest, content: first, ...(edit ? { components: [], embeds: [] } : {}) };
      return { value: await call(plainBody), overflow };
    },
    take() {
      if (refused.length === 0) return {};
      const fallbacks = refused;
      refused = [];
      return { fallbacks };
    },
  };
}
