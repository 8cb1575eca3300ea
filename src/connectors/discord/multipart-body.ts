import { randomBytes } from 'node:crypto';

// A message write with files as Discord takes it: multipart/form-data, the JSON body in a
// `payload_json` part and each file in a `files[n]` part. Made here as bytes and sent as they are
// (`passThroughBody`): discord.js's own FormData path hands Node's global FormData to the undici
// package, whose body reader fails on it ("action is not a function") when their versions differ.

export interface FilePart {
  name: string;
  data: Buffer;
  contentType?: string;
}

/** Characters a file name keeps in a part header (quotes and line ends would break it). */
const safeName = (name: string): string => name.replace(/["\r\n\\]/g, '_');

export function multipartBody(json: unknown, files: readonly FilePart[]): { body: Buffer; contentType: string } {
  const boundary = `----bridge${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  const part = (headers: string, data: Buffer) => {
    chunks.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), data, Buffer.from('\r\n'));
  };
  part(
    'Content-Disposition: form-data; name="payload_json"\r\nContent-Type: application/json',
    Buffer.from(JSON.stringify(json)),
  );
  for (const [i, f] of files.entries()) {
    part(
      `Content-Disposition: form-data; name="files[${i}]"; filename="${safeName(f.name)}"\r\nContent-Type: ${
        f.contentType ?? 'application/octet-stream'
      }`,
      f.data,
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
