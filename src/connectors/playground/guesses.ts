// Wrong PLAYGROUND_TOKEN guesses are slowed: an address that gave `perAddress` wrong ones within
// `windowMs` is refused (429) before its next token is even compared, right or wrong, until the
// oldest of them leaves the window. Past `total` wrong ones from all addresses together (an IPv6
// network holds many /64s), any address that gave one is refused too; an address that gave none
// never is, so a flood of guesses cannot lock out a script that sends the right token with every
// request. A browser already holding the credential cookie never counts: only a presented token
// (`?token=`, `Authorization: Bearer`) is a guess. The token's strength (start-config.ts) is what
// makes guessing hopeless; this keeps it slow and visible. Memory: at most `remembered` failures,
// the oldest forgotten first.

export interface GuessLimits {
  perAddress: number;
  total: number;
  windowMs: number;
  /** Failures kept in memory at most (a flood from many addresses forgets its oldest). */
  remembered: number;
}

export const GUESS_LIMITS: GuessLimits = { perAddress: 5, total: 50, windowMs: 60_000, remembered: 10_000 };

export interface GuessLimiter {
  /** Whether a token from `address` is refused unseen now; `retryAfterS` when it is. */
  blocked(address: string): { retryAfterS: number } | undefined;
  /** A wrong token from `address`: how many it gave in the window, this one included. */
  failed(address: string): number;
}

export function createGuessLimiter(limits: GuessLimits = GUESS_LIMITS, now: () => number = Date.now): GuessLimiter {
  /** The failures of the window, oldest first. */
  const failures: { address: string; at: number }[] = [];
  const byAddress = new Map<string, number>();
  const forgetOldest = (): void => {
    const f = failures.shift();
    if (f === undefined) return;
    const n = (byAddress.get(f.address) ?? 1) - 1;
    if (n <= 0) byAddress.delete(f.address);
    else byAddress.set(f.address, n);
  };
  const expire = (t: number): void => {
    while (failures.length > 0 && (failures[0]?.at ?? t) <= t - limits.windowMs) forgetOldest();
  };
  const retryAfter = (t: number, address?: string): number => {
    const oldest = address === undefined ? failures[0] : failures.find((f) => f.address === address);
    return Math.max(1, Math.ceil(((oldest?.at ?? t) + limits.windowMs - t) / 1000));
  };
  return {
    blocked(address) {
      const t = now();
      expire(t);
      const own = byAddress.get(address) ?? 0;
      if (own >= limits.perAddress || (own > 0 && failures.length >= limits.total))
        return { retryAfterS: retryAfter(t, address) };
      return undefined;
    },
    failed(address) {
      const t = now();
      expire(t);
      while (failures.length >= limits.remembered) forgetOldest();
      failures.push({ address, at: t });
      const n = (byAddress.get(address) ?? 0) + 1;
      byAddress.set(address, n);
      return n;
    },
  };
}
