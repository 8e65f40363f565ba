import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A load balancer between the client and the API, over real HTTP, that can spoil chosen answers:
 * `{}` or an empty body where the write committed (the request reached the service first), or its
 * own HTML error page (the request never reached it). Everything else passes through unchanged.
 */

/** What the proxy answers instead of the service's answer. */
export interface ProxyFault {
  status: number;
  body: string;
  contentType?: string | undefined;
  /** Whether the request reaches the service first (a write commits there). Default true. */
  forward?: boolean | undefined;
}

/** One request through the proxy, as the rule sees it and as it is recorded. */
export interface ProxiedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  idempotencyKey: string | undefined;
  /** The service's status, when the request reached it. */
  upstreamStatus?: number | undefined;
  /** The service answered with a stored answer (`Idempotent-Replay: true`). */
  replayed?: boolean | undefined;
  /** The status the client got. */
  answered?: number | undefined;
  /** The answer was spoiled by a fault. */
  spoiled?: boolean | undefined;
}

/** Chooses the fault of a request (undefined: passed through). Sees the requests before it too. */
export type FaultRule = (
  request: ProxiedRequest,
  before: readonly ProxiedRequest[],
) => ProxyFault | undefined;

export interface FaultProxy {
  baseUrl: string;
  requests: ProxiedRequest[];
  /** Replaces the rule; undefined passes everything through. */
  setRule(rule: FaultRule | undefined): void;
  close(): Promise<void>;
}

export const NGINX_502_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n';

export const NGINX_404_PAGE =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n';

/** Hop-by-hop headers, and those the proxy recomputes (the body is read whole). */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'host',
]);

export async function startFaultProxy(target: string, rule?: FaultRule): Promise<FaultProxy> {
  let current = rule;
  const requests: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(599).end(String(error));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', target);
    const key = req.headers['idempotency-key'];
    const request: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      idempotencyKey: Array.isArray(key) ? key.join(',') : key,
    };
    const fault = current?.(request, [...requests]);
    requests.push(request);
    if (fault?.forward === false) return spoil(res, request, fault);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || DROPPED.has(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const upstream = await fetch(url, {
      method: request.method,
      headers,
      body: body.length > 0 ? body : undefined,
      redirect: 'manual',
    });
    const text = Buffer.from(await upstream.arrayBuffer());
    request.upstreamStatus = upstream.status;
    request.replayed = upstream.headers.get('idempotent-replay') === 'true';
    if (fault) return spoil(res, request, fault);
    const passed: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!DROPPED.has(name)) passed[name] = value;
    });
    request.answered = upstream.status;
    res.writeHead(upstream.status, passed).end(text);
  }

  function spoil(res: ServerResponse, request: ProxiedRequest, fault: ProxyFault): void {
    request.answered = fault.status;
    request.spoiled = true;
    res
      .writeHead(fault.status, fault.contentType ? { 'content-type': fault.contentType } : {})
      .end(fault.body);
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    setRule(next) {
      current = next;
    },
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** A rule spoiling the answers of `method path` for the requests `pick` chooses. */
export function onRoute(
  method: string,
  path: string,
  fault: ProxyFault,
  pick: (request: ProxiedRequest, before: readonly ProxiedRequest[]) => boolean = () => true,
): FaultRule {
  return (request, before) =>
    request.method === method && request.path.endsWith(path) && pick(request, before) ? fault : undefined;
}
