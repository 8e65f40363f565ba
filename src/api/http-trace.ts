import { chmod, writeFile } from 'node:fs/promises';

/**
 * `--trace-http FILE`: every request and response of a command as a HAR 1.2 file, for a support
 * ticket with the service. What would let anyone act as us is redacted before it is kept: the
 * `Authorization` and cookie headers, the token endpoint's form fields (`refresh_token`, `code`,
 * `code_verifier`...) and its answer's tokens, any JSON member named like a token or a secret. A
 * multipart body (a PDF upload) is described by its fields, files by name, type and size only.
 *
 * @example
 *   const trace = new HttpTrace();
 *   const client = new ReceivablesClient({ ..., fetch: trace.fetch(fetch) });
 *   ...
 *   await trace.save('pass.har');
 */

const REDACTED = '[redacted]';
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization']);
const SECRET_FIELDS =
  /^(access_token|refresh_token|id_token|code|code_verifier|client_secret|password|token|accessToken|refreshToken|secret)$/i;

interface HarHeader {
  name: string;
  value: string;
}

interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    headers: HarHeader[];
    queryString: HarHeader[];
    cookies: [];
    headersSize: -1;
    bodySize: number;
    postData?: {
      mimeType: string;
      text?: string;
      params?: Array<{ name: string; value?: string; fileName?: string; contentType?: string }>;
    };
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    headers: HarHeader[];
    cookies: [];
    content: { size: number; mimeType: string; text?: string };
    redirectURL: string;
    headersSize: -1;
    bodySize: number;
    _error?: string;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
}

export class HttpTrace {
  readonly #entries: HarEntry[] = [];

  get size(): number {
    return this.#entries.length;
  }

  /** A fetch that records every exchange it carries, then answers as `inner` did. */
  fetch(inner: typeof fetch = globalThis.fetch): typeof fetch {
    return (async (input: string | URL | Request, init?: RequestInit) => {
      // The URL and headers only: the body is described from `init` as given (never consumed).
      const request =
        input instanceof Request
          ? input
          : new Request(input, { method: init?.method, headers: init?.headers });
      const started = Date.now();
      const entry = this.#entry(request, started, await describeBody(init?.body, request.headers));
      this.#entries.push(entry);
      let response: Response;
      try {
        response = await inner(input, init);
      } catch (error) {
        entry.time = Date.now() - started;
        entry.response._error = error instanceof Error ? error.message : String(error);
        throw error;
      }
      entry.time = Date.now() - started;
      entry.timings.wait = entry.time;
      entry.response.status = response.status;
      entry.response.statusText = response.statusText;
      entry.response.headers = headersOf(response.headers);
      const mimeType = response.headers.get('content-type') ?? '';
      entry.response.content.mimeType = mimeType;
      if (/json|text|x-www-form-urlencoded/i.test(mimeType)) {
        const text = await response
          .clone()
          .text()
          .catch(() => '');
        entry.response.content.size = Buffer.byteLength(text);
        entry.response.bodySize = entry.response.content.size;
        entry.response.content.text = redactText(text, mimeType);
      }
      return response;
    }) as typeof fetch;
  }

  /**
   * Writes the HAR file (JSON, 2-space indented), mode 0600 even when it existed: tokens are
   * redacted, but request bodies (the billing data sent) are not.
   */
  async save(path: string): Promise<void> {
    const har = {
      log: {
        version: '1.2',
        creator: { name: 'receivables-sync', version: '0.1.0' },
        entries: this.#entries,
      },
    };
    await writeFile(path, `${JSON.stringify(har, null, 2)}\n`, { mode: 0o600 });
    await chmod(path, 0o600);
  }

  #entry(request: Request, started: number, postData: HarEntry['request']['postData']): HarEntry {
    const url = new URL(request.url);
    return {
      startedDateTime: new Date(started).toISOString(),
      time: 0,
      request: {
        method: request.method,
        url: request.url,
        httpVersion: 'HTTP/1.1',
        headers: headersOf(request.headers),
        queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
        cookies: [],
        headersSize: -1,
        bodySize: postData?.text ? Buffer.byteLength(postData.text) : -1,
        ...(postData ? { postData } : {}),
      },
      response: {
        status: 0,
        statusText: '',
        httpVersion: 'HTTP/1.1',
        headers: [],
        cookies: [],
        content: { size: 0, mimeType: '' },
        redirectURL: '',
        headersSize: -1,
        bodySize: -1,
      },
      cache: {},
      timings: { send: 0, wait: 0, receive: 0 },
    };
  }
}

function headersOf(headers: Headers): HarHeader[] {
  return [...headers].map(([name, value]) => ({
    name,
    value: SECRET_HEADERS.has(name.toLowerCase()) ? redactHeader(value) : value,
  }));
}

/** `Bearer [redacted]`: the scheme stays, it tells what was sent. */
function redactHeader(value: string): string {
  const scheme = /^(\w+)\s/.exec(value)?.[1];
  return scheme ? `${scheme} ${REDACTED}` : REDACTED;
}

async function describeBody(
  body: RequestInit['body'] | undefined,
  headers: Headers,
): Promise<HarEntry['request']['postData'] | undefined> {
  if (body === undefined || body === null) return undefined;
  const mimeType = headers.get('content-type') ?? '';
  if (body instanceof FormData) {
    const params: NonNullable<HarEntry['request']['postData']>['params'] = [];
    for (const [name, value] of body) {
      if (typeof value === 'string')
        params.push({ name, value: SECRET_FIELDS.test(name) ? REDACTED : value });
      else
        params.push({ name, fileName: value.name, contentType: value.type, value: `(${value.size} bytes)` });
    }
    return { mimeType: mimeType || 'multipart/form-data', params };
  }
  if (body instanceof URLSearchParams) return { mimeType, text: redactForm(body.toString()) };
  if (typeof body === 'string') return { mimeType, text: redactText(body, mimeType) };
  return { mimeType, text: '(binary body not kept)' };
}

function redactText(text: string, mimeType: string): string {
  if (/x-www-form-urlencoded/i.test(mimeType)) return redactForm(text);
  if (/json/i.test(mimeType)) {
    try {
      return JSON.stringify(JSON.parse(text, (key, value) => (SECRET_FIELDS.test(key) ? REDACTED : value)));
    } catch {
      return text;
    }
  }
  return text;
}

function redactForm(text: string): string {
  const form = new URLSearchParams(text);
  for (const name of [...form.keys()]) if (SECRET_FIELDS.test(name)) form.set(name, REDACTED);
  return form.toString();
}
