import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeState } from './state.js';

// Files users shared, served at their `url_private` like Slack does: only to a request with a
// valid bot token in `Authorization: Bearer …`. Anything else gets what Slack gives a browser
// that is not signed in: 200 with an HTML login page (not a 401), which a careless client would
// take for the file.

export interface FakeFileInput {
  name: string;
  /** Reported as `mimetype` (default text/plain). */
  mimetype?: string;
  content: string | Buffer;
  /** Declared `size` (default the content's byte length). */
  size?: number;
}

export interface HostedFile {
  id: string;
  name: string;
  mimetype: string;
  content: Buffer;
  size: number;
}

export interface FileDownload {
  path: string;
  /** Whether the request carried a bot token the fake accepts. */
  authorized: boolean;
  /** The raw Authorization header (tests check how the token was sent). */
  authorization: string | undefined;
}

export const LOGIN_PAGE =
  '<!DOCTYPE html><html><head><title>Sign in | Slack</title></head><body><form>sign in to continue</form></body></html>';

export class FakeFiles {
  readonly files = new Map<string, HostedFile>();
  readonly downloads: FileDownload[] = [];
  /** The workspace's tokens are refused for files (a token without files:read). */
  refuseTokens = false;
  private next = 1;

  constructor(
    private readonly state: FakeState,
    private readonly base: () => string,
    private readonly teamId: string,
  ) {}

  /** Hosts a file and returns the `files` entry of a message event. */
  add(input: FakeFileInput): Record<string, unknown> {
    const id = `F${String(this.next++).padStart(6, '0')}`;
    const content = typeof input.content === 'string' ? Buffer.from(input.content) : input.content;
    const file: HostedFile = {
      id,
      name: input.name,
      mimetype: input.mimetype ?? 'text/plain',
      content,
      size: input.size ?? content.length,
    };
    this.files.set(id, file);
    const path = `/files-pri/${this.teamId}-${id}/${encodeURIComponent(file.name)}`;
    return {
      id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split('.').pop() ?? '',
      size: file.size,
      mode: 'hosted',
      is_external: false,
      url_private: `${this.base()}${path}`,
      url_private_download: `${this.base()}/files-pri/${this.teamId}-${id}/download/${encodeURIComponent(file.name)}`,
      permalink: `https://fake.slack.com/files/U0USER/${id}/${encodeURIComponent(file.name)}`,
    };
  }

  /** GET /files-pri/…: true when handled. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '';
    const m = /^\/files-pri\/[^/-]+-(F\d+)\/(?:download\/)?[^/?]+$/.exec(url);
    if (!m || req.method !== 'GET') return false;
    const authorization = req.headers.authorization;
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    const info = token === undefined ? undefined : this.state.tokens.get(token);
    const authorized = info !== undefined && info.kind === 'bot' && !this.refuseTokens;
    this.downloads.push({ path: url, authorized, authorization });
    const file = this.files.get(m[1] ?? '');
    if (!authorized || file === undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(LOGIN_PAGE);
      return true;
    }
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(file.content.length) });
    res.end(file.content);
    return true;
  }
}
