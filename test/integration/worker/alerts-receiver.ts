import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got, with what it answered (null: it never answered). */
export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  answered: number | null;
  /** `Date.now()` when it came. */
  at: number;
}

/**
 * A webhook receiver on a free loopback port (real HTTP): records every request, answers 200, or
 * what it is told for a path prefix (`failNext`: 500 for the next n requests; `hang`: never).
 */
export async function startAlertReceiver() {
  const requests: ReceivedRequest[] = [];
  const failures = new Map<string, number>();
  const hanging = new Set<string>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    const request: ReceivedRequest = { path, headers: req.headers, body, answered: null, at: Date.now() };
    requests.push(request);
    if ([...hanging].some((p) => path.startsWith(p))) return;
    const prefix = [...failures.keys()].find((p) => path.startsWith(p) && failures.get(p)! > 0);
    const status = prefix ? 500 : 200;
    if (prefix) failures.set(prefix, failures.get(prefix)! - 1);
    request.answered = status;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'server error');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    requests,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    failNext(prefix: string, times: number) {
      failures.set(prefix, times);
    },
    hang(prefix: string) {
      hanging.add(prefix);
    },
    /** The bodies a path prefix accepted (answered 200). */
    delivered(prefix: string): any[] {
      return requests.filter((r) => r.path.startsWith(prefix) && r.answered === 200).map((r) => r.body);
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

export type AlertReceiver = Awaited<ReturnType<typeof startAlertReceiver>>;
