import type { webApi } from '@slack/bolt';
import type { AgentFile, WriteOptions } from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import { fileLine } from '../../core/reply/agent-work.js';

// Files an agent sent as bytes, uploaded into the reply's thread with Slack's external upload
// flow (files.getUploadURLExternal, the bytes to its URL, files.completeUploadExternal: the
// SDK's filesUploadV2; scope files:write). Done once per file before the reply's last write,
// whatever retries that write takes; a file Slack refuses is named in a line under the text.

/** The sink uploads a file the upstream sent as bytes. */
export const uploadsBytes = (file: AgentFile): boolean => file.data !== undefined && file.url === undefined;

export interface FileUploads {
  /** Uploads the last write's byte files not yet tried; the lines naming those Slack refused. */
  before(opts: WriteOptions): Promise<string>;
}

export function createFileUploads(
  client: webApi.WebClient,
  where: { channel: string; threadTs: string | undefined },
  logger: Logger,
): FileUploads {
  /** Each file tried, and the line it left ('' once uploaded). */
  const tried = new Map<AgentFile, string>();
  return {
    async before(opts) {
      const files = (opts.files ?? []).filter(uploadsBytes);
      for (const f of files) {
        if (tried.has(f)) continue;
        try {
          const file = { file: Buffer.from(f.data as Uint8Array), filename: f.name, title: f.name };
          await (where.threadTs !== undefined
            ? client.filesUploadV2({ ...file, channel_id: where.channel, thread_ts: where.threadTs })
            : client.filesUploadV2({ ...file, channel_id: where.channel }));
          tried.set(f, '');
        } catch (err) {
          logger.warn(
            { err: scrubSecrets(String(err)), bytes: f.data?.length },
            'Slack refused a file upload; naming it',
          );
          tried.set(f, fileLine({ name: f.name, ...(f.size !== undefined ? { size: f.size } : {}) }));
        }
      }
      const lines = files.map((f) => tried.get(f) ?? '').filter((l) => l !== '');
      return lines.length > 0 ? `\n\n${lines.join('\n')}` : '';
    },
  };
}
