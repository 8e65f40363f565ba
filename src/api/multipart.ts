import { createHash } from 'node:crypto';

/** A file part of a multipart body. */
export interface FilePart {
  bytes: Uint8Array;
  filename: string;
  /** e.g. `application/pdf`, `image/png`. */
  contentType: string;
}

/** One form field, in the order it is sent: a text value or a file. */
export type MultipartField = { name: string; value: string } | { name: string; file: FilePart };

/** A multipart/form-data body serialised once, so every retry sends the very same bytes. */
export interface MultipartBody {
  bytes: Buffer;
  /** `multipart/form-data; boundary=...`, to send as the Content-Type header. */
  contentType: string;
  boundary: string;
}

const CRLF = '\r\n';

/**
 * Serialises `fields` as multipart/form-data (RFC 7578). The boundary is derived from a hash of the
 * content, so the same fields always give byte-identical output (a retry, or a process restarted
 * with the same persisted payload, sends exactly what was sent before), and it is checked not to
 * occur inside any part.
 *
 * @example
 * const body = encodeMultipart([{ name: 'number', value: 'INV-1' }, { name: 'file', file: pdf }]);
 * await fetch(url, { method: 'POST', body: body.bytes, headers: { 'content-type': body.contentType } });
 */
export function encodeMultipart(fields: readonly MultipartField[]): MultipartBody {
  const parts = fields.map(partOf);
  const boundary = boundaryFor(parts);
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}${CRLF}${part.head}${CRLF}`, 'utf8'), part.body, Buffer.from(CRLF));
  }
  chunks.push(Buffer.from(`--${boundary}--${CRLF}`, 'utf8'));
  return {
    bytes: Buffer.concat(chunks),
    contentType: `multipart/form-data; boundary=${boundary}`,
    boundary,
  };
}

interface EncodedPart {
  head: string;
  body: Buffer;
}

function partOf(field: MultipartField): EncodedPart {
  checkHeaderText(field.name, 'field name');
  if ('value' in field) {
    return {
      head: `Content-Disposition: form-data; name="${quote(field.name)}"${CRLF}`,
      body: Buffer.from(field.value, 'utf8'),
    };
  }
  checkHeaderText(field.file.filename, 'file name');
  checkHeaderText(field.file.contentType, 'content type');
  return {
    head:
      `Content-Disposition: form-data; name="${quote(field.name)}"; filename="${quote(field.file.filename)}"${CRLF}` +
      `Content-Type: ${field.file.contentType}${CRLF}`,
    body: Buffer.from(field.file.bytes.buffer, field.file.bytes.byteOffset, field.file.bytes.byteLength),
  };
}

/** A content hash, re-drawn with a counter in the (astronomically unlikely) case it occurs in a part. */
function boundaryFor(parts: readonly EncodedPart[]): string {
  for (let salt = 0; ; salt++) {
    const hash = createHash('sha256').update(String(salt));
    for (const part of parts) hash.update(part.head).update(part.body);
    const boundary = `receivables-sync-${hash.digest('hex').slice(0, 32)}`;
    if (!parts.some((p) => p.head.includes(boundary) || p.body.includes(boundary))) return boundary;
  }
}

/** Quotes per the WHATWG form encoding: `"` and line breaks are percent-escaped in names. */
function quote(text: string): string {
  return text.replace(/"/g, '%22');
}

function checkHeaderText(text: string, what: string): void {
  if (/[\r\n]/.test(text)) throw new TypeError(`multipart ${what} must not contain a line break`);
}
