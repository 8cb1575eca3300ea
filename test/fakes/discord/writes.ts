import type { WriteRecord } from './state.js';

// The one check every Discord e2e suite runs over every write the bot made (channel messages,
// edits, interaction callbacks, webhook follow-ups and webhook edits): upstream text must never
// ping anyone, so each write that carries text says who may be pinged, and that is nobody.
// Discord's default (no `allowed_mentions`) pings everyone named in the text.

/** True when this `allowed_mentions` lets no mention in the text notify anyone. */
export function pingsNobody(am: unknown): boolean {
  if (typeof am !== 'object' || am === null || Array.isArray(am)) return false;
  const { parse, users, roles, replied_user: repliedUser, ...rest } = am as Record<string, unknown>;
  const none = (v: unknown) => v === undefined || (Array.isArray(v) && v.length === 0);
  // An unknown key might be a future way to allow pings: refuse what is not understood.
  return Object.keys(rest).length === 0 && none(parse) && none(users) && none(roles) && repliedUser !== true;
}

/** The writes that carry text (create, edit, callback with a message, follow-up). */
export function textWrites(record: readonly WriteRecord[]): WriteRecord[] {
  return record.filter((w) => w.method !== 'GET' && w.method !== 'DELETE' && w.content !== undefined);
}

/** One line per write whose text could ping someone; empty when none could. */
export function mentionProblems(record: readonly WriteRecord[]): string[] {
  return textWrites(record)
    .filter((w) => !pingsNobody(w.allowed_mentions))
    .map(
      (w) =>
        `${w.method} ${redactToken(w.path)} (${w.status}) allowed_mentions=${JSON.stringify(w.allowed_mentions)} ` +
        `content=${JSON.stringify((w.content ?? '').slice(0, 80))}`,
    );
}

/**
 * Throws, naming the writes, when any write of the bot could ping: the shared teardown check
 * of the Discord e2e suites (they call it before closing the fake).
 */
export function assertNoPings(record: readonly WriteRecord[]): void {
  const problems = mentionProblems(record);
  if (problems.length > 0) {
    throw new Error(`bot writes that could ping someone (no allowed_mentions {parse: []}):\n${problems.join('\n')}`);
  }
}

/** Interaction tokens are secrets of a sort: keep them out of failure messages. */
function redactToken(path: string): string {
  return path.replace(/^(\/(?:webhooks|interactions)\/\d+\/)[^/]+/, '$1…');
}
