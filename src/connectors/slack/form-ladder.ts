import { PLAIN_FALLBACK, PlatformWriteError } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { formRefusalCode } from './plain-fallback.js';

// The form ladder: a write Slack refuses for its rich form goes again at once with the same words
// in its next form (the plain fallback; plain-fallback.ts lists the refusals). Each sink lists a write's forms richest first
// (a table block in an attachment; section blocks with the controls; plain `text`); the ladder
// tries them in turn, and a form Slack refused is not tried again by the same reply, so a reply's
// later writes (and a write the scheduler retries after a 429) go straight to what Slack took.

/** One form of a write: how rich (0 richest), and how to make it (only when it is tried). */
export interface Form {
  level: number;
  build(): BuiltForm;
}

export interface BuiltForm {
  /** The call's arguments. */
  args: Record<string, unknown>;
  /** Plain form of a final write: the parts beyond the first, posted after it as new messages. */
  overflow?: string[];
}

export interface FormLadder {
  /**
   * Sends the first of `forms` this reply has not outgrown. When Slack refuses a form the reply steps down
   * to the next form and PLAIN_FALLBACK is thrown: the writer sends again at once on a new grant.
   * The last form's refusal, and any other error, is thrown as it came.
   */
  send<T>(forms: readonly Form[], call: (form: BuiltForm) => Promise<T>): Promise<{ value: T; form: BuiltForm }>;
  /** A refusal the sink handled itself (a native stream call that fell back to edits). */
  note(reason: string): void;
  /** The refusals since the last call (for the write's `fallbacks`). */
  take(): { fallbacks?: string[] };
}

export function createFormLadder(logger: Logger): FormLadder {
  /** The least rich form this reply still tries first: raised past each refused form. */
  let floor = 0;
  let refused: string[] = [];
  return {
    async send(forms, call) {
      const usable = forms.filter((f) => f.level >= floor);
      const [form, next] = usable.length > 0 ? usable : forms.slice(-1);
      if (form === undefined) throw new Error('a write needs at least one form');
      const built = form.build();
      try {
        return { value: await call(built), form: built };
      } catch (err) {
        const reason = formRefusalCode(err);
        if (reason === undefined || next === undefined) throw err;
        refused.push(reason);
        floor = next.level;
        logger.warn({ reason, level: form.level }, 'Slack refused a write for its form; sending the words plainer');
        // Again at once, but on a new grant: the refused call counted against the rate limit.
        throw new PlatformWriteError(`Slack refused the write's form: ${reason}`, PLAIN_FALLBACK, true);
      }
    },
    note(reason) {
      refused.push(reason);
    },
    take() {
      if (refused.length === 0) return {};
      const fallbacks = refused;
      refused = [];
      return { fallbacks };
    },
  };
}
