import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { LoginFlowError } from './auth-errors.js';

export interface LoopbackReceiver {
  /** `http://127.0.0.1:<port>/callback`, the redirect_uri of this login (RFC 8252 §7.3). */
  redirectUri: string;
  /** The parameters of the first redirect that carries this login's `state`. */
  result: Promise<URLSearchParams>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * A one-shot HTTP server on 127.0.0.1, a random port, receiving the authorization redirect. A
 * request without this login's `state` is answered 400 and ignored (it is not ours: a stale tab or
 * a forgery); the first one with it settles the login, and the server stops.
 */
export async function startLoopbackReceiver(init: {
  expectedState: string;
  timeoutMs: number;
  signal?: AbortSignal;
  path?: string;
}): Promise<LoopbackReceiver> {
  const path = init.path ?? '/callback';
  let settle!: { resolve: (p: URLSearchParams) => void; reject: (e: Error) => void };
  const result = new Promise<URLSearchParams>((resolve, reject) => {
    settle = { resolve, reject };
  });
  result.catch(() => {});
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const reply = (status: number, body: string) =>
      response
        .writeHead(status, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'close',
        })
        .end(body);
    if (request.method !== 'GET' || url.pathname !== path)
      return reply(404, PAGE('Not found', 'Nothing here.'));
    if (url.searchParams.get('state') !== init.expectedState) {
      return reply(
        400,
        PAGE('Unknown login', 'This redirect does not belong to the running login; it was ignored.'),
      );
    }
    const failed = url.searchParams.has('error');
    reply(
      200,
      failed
        ? PAGE('Login refused', 'The authorization server refused the login. See the terminal.')
        : PAGE('Logged in', 'receivables-sync received the authorization. You can close this tab.'),
    );
    settle.resolve(url.searchParams);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const timer = setTimeout(
    () =>
      settle.reject(
        new LoginFlowError(`no authorization redirect within ${Math.round(init.timeoutMs / 1000)} s`),
      ),
    init.timeoutMs,
  );
  const onAbort = () => settle.reject(new LoginFlowError('the login was cancelled'));
  init.signal?.addEventListener('abort', onAbort, { once: true });
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onAbort);
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  return { redirectUri: `http://127.0.0.1:${port}${path}`, result, close };
}

/**
 * Headless servers: the browser runs elsewhere, its redirect to 127.0.0.1 fails, and the user pastes
 * the address it tried to open. Lines without this login's `state` are ignored (with a hint).
 */
export function readPastedRedirect(input: Readable, expectedState: string, onIgnored: (why: string) => void) {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY, terminal: false });
  const result = (async () => {
    for await (const raw of lines) {
      const line = raw.trim();
      if (line === '') continue;
      const params = pastedParams(line);
      if (!params) onIgnored('that is not a URL; paste the whole address from the browser');
      else if (params.get('state') !== expectedState)
        onIgnored('that address does not carry the state of this login');
      else return params;
    }
    throw new LoginFlowError('the input ended before a redirect address was pasted');
  })();
  result.catch(() => {});
  return { result, close: () => lines.close() };
}

function pastedParams(line: string): URLSearchParams | undefined {
  try {
    return new URL(line).searchParams;
  } catch {
    return line.includes('state=') ? new URLSearchParams(line.replace(/^\?/, '')) : undefined;
  }
}
