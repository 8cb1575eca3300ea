import type { webApi } from '@slack/bolt';

// Display names for the upstream's metadata: one users.info per user and hour at most.

const TTL_MS = 60 * 60_000;
const MAX_ENTRIES = 10_000;

export class UserNames {
  private readonly cache = new Map<string, { name: string | undefined; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async name(client: webApi.WebClient, team: string, userId: string): Promise<string | undefined> {
    const key = `${team}:${userId}`;
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < TTL_MS) return hit.name;
    let name: string | undefined;
    try {
      const res = await client.users.info({ user: userId });
      const u = res.user;
      name = u?.profile?.display_name || u?.real_name || u?.name || undefined;
    } catch {
      // A missing name only leaves the metadata field out.
      name = undefined;
    }
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { name, at: this.now() });
    return name;
  }
}
