import type { UpstreamConfig } from './config/config.js';
import type { Logger } from './logger.js';

// `start` with a configured upstream: one quick look at it, as `doctor` would (the same listing
// request, the same hints), while the rest starts. Not fatal - the service may come up later and
// replies retry per message - but a newcomer whose CHAT_API_URL points at nothing learns it at
// once, in one line, instead of from every reply failing.

/** Long enough for a real service across the internet, short enough to say it "at once". */
export const START_CHECK_TIMEOUT_MS = 3000;

/** The first problem with the upstream (with what to do), or undefined when it answered as it should. */
export async function upstreamProblem(
  up: UpstreamConfig,
  timeoutMs = START_CHECK_TIMEOUT_MS,
): Promise<string | undefined> {
  const { createCheckClient } = await import('./doctor/http.js');
  const { checkUpstream } = await import('./doctor/upstream-check.js');
  const http = createCheckClient(timeoutMs);
  try {
    const bad = (await checkUpstream(up, http)).find((r) => r.status === 'FAIL');
    return bad === undefined ? undefined : `${bad.detail}; ${bad.hint ?? 'check CHAT_API_URL'}`;
  } catch (err) {
    return `the upstream could not be checked: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    await http.close().catch(() => undefined);
  }
}

/** Checks in the background and logs one warning line if the upstream does not answer as it should. */
export function warnIfUpstreamDown(up: UpstreamConfig, log: Logger, onProblem?: (text: string) => void): Promise<void> {
  return upstreamProblem(up).then((problem) => {
    if (problem === undefined) return;
    log.warn(
      { upstream: up.url },
      `the upstream does not answer as it should: ${problem} (replies fail until it does; \`assistant-bridge doctor\` checks it)`,
    );
    onProblem?.(problem);
  });
}
