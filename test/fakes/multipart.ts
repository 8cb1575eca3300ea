// multipart/form-data bodies as the fakes read them (Slack's upload URL, Discord's attachments):
// each part's name, filename, content type and bytes. A body whose boundary is missing or whose
// parts do not end where they should is refused (undefined), as a server would answer 400.

export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary of a multipart/form-data content type, or undefined for any other type. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined || !/^multipart\/form-data\b/i.test(contentType)) return undefined;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

export function parseMultipart(body: Buffer, boundary: string): FormPart[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  // Bounded: each pass moves past one delimiter, and there are at most body.length of them.
  for (let i = 0; i < body.length; i++) {
    const after = at + delimiter.length;
    if (body.subarray(after, after + 2).toString() === '--') return parts;
    const headStart = after + 2; // CRLF after the delimiter
    const headEnd = body.indexOf('\r\n\r\n', headStart);
    if (headEnd < 0) return undefined;
    const next = body.indexOf(delimiter, headEnd + 4);
    if (next < 0) return undefined;
    const head = body.subarray(headStart, headEnd).toString('utf8');
    const disposition = /content-disposition:([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) return undefined;
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const contentType = /content-type:\s*([^\r\n]*)/i.exec(head)?.[1]?.trim();
    // The part's data ends with the CRLF before the next delimiter.
    const data = body.subarray(headEnd + 4, next - 2);
    parts.push({
      name,
      ...(filename !== undefined ? { filename } : {}),
      ...(contentType !== undefined ? { contentType } : {}),
      data: Buffer.from(data),
    });
    at = next;
  }
  return undefined;
}
